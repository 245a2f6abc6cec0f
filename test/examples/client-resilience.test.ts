// An example of testing client code against minipod: one emulator per file, a reset between tests,
// and the failures of the real service made to happen on purpose. On createEmulator's default clock
// (auto), the waits below take no wall time: time skips ahead while the test waits and nothing
// runs on real time. (In a project of your own, import from "minipod" instead of "../../src/index.js".)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import runpodSdk from "runpod-sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/** The client code under test: submit a job, retrying 429 and 5xx with exponential backoff. */
async function submitWithRetry(baseUrl: string, endpoint: string, input: object, sleep: (ms: number) => Promise<void>) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${baseUrl}/v2/${endpoint}/run`, {
      method: "POST",
      headers: { authorization: "Bearer my-key", "content-type": "application/json" },
      body: JSON.stringify({ input }),
    });
    if (res.ok) return { ...((await res.json()) as { id: string }), attempts: attempt + 1 };
    if ((res.status !== 429 && res.status < 500) || attempt === 4) throw new Error(`submit failed: ${res.status}`);
    const retryAfter = Number(res.headers.get("retry-after"));
    await sleep(retryAfter > 0 ? retryAfter * 1000 : 100 * 2 ** attempt);
  }
}

let emu: Emulator;
const slept: number[] = [];
const fakeSleep = async (ms: number) => void slept.push(ms);

beforeAll(async () => {
  emu = await createEmulator({
    config: {
      endpoints: [
        { id: "gen", handler: "scripted", workersMin: 1, workersMax: 2 },
        // A handler written in the test itself: the worker the client under test expects.
        {
          id: "upper",
          handler: async (input, ctx) => {
            await ctx.sleep(1500); // virtual time: skipped while the test waits for the job
            return { text: input.text.toUpperCase(), attempt: ctx.attempt };
          },
        },
      ],
    },
  });
});
afterAll(() => emu.close());
beforeEach(async () => {
  await emu.reset(); // jobs, fault rules and journal back to the configured state
  slept.length = 0;
});

describe("a client against minipod", () => {
  it("gets through a 500", async () => {
    emu.faults.add({ endpoint: "gen", operation: "run", fault: { type: "http", status: 500 }, times: 1 });
    const job = await submitWithRetry(emu.url, "gen", { prompt: "hi" }, fakeSleep);
    expect(job.attempts).toBe(2);
    expect(slept).toEqual([100]);
    expect(emu.requests({ operation: "run" }).requests.map((r) => r.status)).toEqual([500, 200]);
  });

  it("backs off on 429 as Retry-After says", async () => {
    emu.faults.add({ operation: "run", fault: { type: "http", status: 429, retryAfter: 2 }, times: 2 });
    const job = await submitWithRetry(emu.url, "gen", {}, fakeSleep);
    expect(job.attempts).toBe(3);
    expect(slept).toEqual([2000, 2000]);
  });

  it("sees a job time out", async () => {
    emu.faults.add({ endpoint: "gen", fault: { type: "timeout" }, times: 1 });
    const sdk = runpodSdk("my-key", { baseUrl: `${emu.url}/v2` }).endpoint("gen")!;
    const { id } = await sdk.run({ input: {}, policy: { executionTimeout: 60_000 } });
    const view = await emu.waitForJob("gen", id, "TIMED_OUT");
    expect(view.executionTime).toBe(60_000);
    expect(emu.events(id).map((e) => e.to)).toEqual(["IN_QUEUE", "IN_PROGRESS", "IN_PROGRESS", "TIMED_OUT"]);
  });

  it("gets the output of a handler written in the test", async () => {
    const sdk = runpodSdk("my-key", { baseUrl: `${emu.url}/v2` }).endpoint("upper")!;
    const { id } = await sdk.run({ input: { text: "hello" } });
    const view = await emu.waitForJob("upper", id, "COMPLETED");
    expect(view).toMatchObject({ output: { text: "HELLO", attempt: 1 }, executionTime: 1500 });
    expect(await sdk.status(id)).toMatchObject({ status: "COMPLETED", output: { text: "HELLO", attempt: 1 } });
  });

  it("receives a webhook after one failed delivery", async () => {
    const received: unknown[] = [];
    let first = true;
    const receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => (body += d.toString()));
      req.on("end", () => {
        received.push(JSON.parse(body));
        res.statusCode = first ? 503 : 200;
        first = false;
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`;
    try {
      const sdk = runpodSdk("my-key", { baseUrl: `${emu.url}/v2` }).endpoint("gen")!;
      const { id } = await sdk.run({ input: { output: "done" }, webhook: hook });
      await emu.runUntilIdle();
      expect(emu.webhooks(id).map((d) => [d.attempt, d.status])).toEqual([
        [1, 503],
        [2, 200],
      ]);
      expect(received).toHaveLength(2);
      expect(received[1]).toMatchObject({ id, status: "COMPLETED", output: "done" });
    } finally {
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
