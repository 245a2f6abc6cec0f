import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

let emu: Emulator;
let server: Server | undefined;
afterEach(async () => {
  await emu?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

type Answer = { status: number; json: unknown } | "hang";
type Body = { id: string; input: Record<string, unknown> };

/** A worker's local test server, as the real worker library serves it: POST /runsync. */
async function localWorker(answer: (body: Body) => Answer) {
  const seen: Body[] = [];
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (d: Buffer) => (text += d.toString()));
    req.on("end", () => {
      const body = JSON.parse(text);
      seen.push(body);
      const a = answer(body);
      if (a === "hang") return; // never answers
      res.writeHead(a.status, { "content-type": "application/json" });
      res.end(JSON.stringify(a.json));
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const boot = (handler: unknown) =>
  createEmulator({ clock: "manual", config: { endpoints: [{ id: "w", handler: handler as string, workersMin: 1 }] } }).then((x) => (emu = x));
const runsync = async (input: Record<string, unknown>, policy?: Record<string, unknown>) =>
  (await fetch(`${emu.url}/v2/w/runsync`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input, policy }) })).json() as Promise<Record<string, unknown>>;

describe("http handler", () => {
  it("forwards each job to the worker's /runsync and reports its output", async () => {
    const worker = await localWorker(({ id, input }) => ({ status: 200, json: { id, status: "COMPLETED", output: { echoed: input } } }));
    await boot({ type: "http", url: worker.url });
    const res = await runsync({ x: 1 });
    expect(res).toMatchObject({ status: "COMPLETED", output: { echoed: { x: 1 } } });
    expect(worker.seen).toEqual([{ id: res.id, input: { x: 1 } }]);
  });

  it("reports the worker's error, and a non-200 answer, as FAILED", async () => {
    let n = 0;
    const worker = await localWorker(() => (n++ === 0 ? { status: 200, json: { status: "FAILED", error: "bad prompt" } } : { status: 500, json: { detail: "crash" } }));
    await boot(worker.url); // the URL alone works too
    expect(await runsync({})).toMatchObject({ status: "FAILED", error: "bad prompt" });
    expect(await runsync({})).toMatchObject({ status: "FAILED", error: expect.stringContaining("answered 500") });
  });

  it("aborts the worker call when the job is cancelled, and fails clearly when nothing listens", async () => {
    const worker = await localWorker(() => "hang");
    await boot({ type: "http", url: worker.url });
    const id = ((await (await fetch(`${emu.url}/v2/w/run`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input: {} }) })).json()) as { id: string }).id;
    while (worker.seen.length === 0) await new Promise((r) => setImmediate(r));
    const cancelled = await (await fetch(`${emu.url}/v2/w/cancel/${id}`, { method: "POST", headers: { authorization: "k" } })).json();
    expect(cancelled).toEqual({ id, status: "CANCELLED" });
    await emu.close();

    const gone = await localWorker(() => ({ status: 200, json: {} }));
    const url = gone.url;
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    await boot({ type: "http", url });
    expect(await runsync({})).toMatchObject({ status: "FAILED", error: expect.stringMatching(/could not be reached: ECONNREFUSED/) });
  });

  it("refuses a malformed http handler in the config", async () => {
    await expect(createEmulator({ config: { endpoints: [{ id: "w", handler: { type: "http", url: "not a url" } as unknown as string }] } })).rejects.toThrow(/endpoints\[0\]\.handler/);
  });
});
