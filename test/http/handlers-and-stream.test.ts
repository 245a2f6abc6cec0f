import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Handler } from "../../src/index.js";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const fixtures = new URL("../fixtures/", import.meta.url).pathname;
const repoFixtures = new URL("../../fixtures/handlers/", import.meta.url).pathname;

describe("handlers", () => {
  it("passes input and a context (jobId, endpointId, attempt, signal, sleep on the virtual clock)", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const spy: Handler = async (input, ctx) => {
      const before = ctx.now();
      await ctx.sleep(2500);
      seen.push({ jobId: ctx.jobId, endpointId: ctx.endpointId, attempt: ctx.attempt, slept: ctx.now() - before, aborted: ctx.signal.aborted });
      if (input.failFirst && ctx.attempt === 1) throw new Error("first attempt fails");
      return { ok: true };
    };
    e = await inProcess({ config: { endpoints: [{ id: "spy", handler: "spy", workersMin: 1 }] }, handlers: { spy } });
    const { id } = (await e.post("/v2/spy/run", { input: { failFirst: true } })).body;
    await e.advance(2500);
    expect((await e.get(`/v2/spy/status/${id}`)).body).toMatchObject({ status: "FAILED", error: "first attempt fails" });
    await e.post(`/v2/spy/retry/${id}`);
    await e.advance(2500);
    expect((await e.get(`/v2/spy/status/${id}`)).body).toMatchObject({ status: "COMPLETED", output: { ok: true }, retries: 1 });
    expect(seen).toEqual([
      { jobId: id, endpointId: "spy", attempt: 1, slept: 2500, aborted: false },
      { jobId: id, endpointId: "spy", attempt: 2, slept: 2500, aborted: false },
    ]);
  });

  it("lets a handler take its context apart; the signal of a destructured context aborts on cancel", async () => {
    const seen: unknown[] = [];
    const parts: Handler = async (input, { jobId, attempt, now, sleep, progress, signal }) => {
      const before = now();
      progress({ step: 1 });
      signal.addEventListener("abort", () => seen.push({ jobId, aborted: signal.aborted }));
      await sleep(1000);
      seen.push({ attempt, slept: now() - before, keys: Object.keys(input) });
      await sleep(60_000);
      return "never";
    };
    e = await inProcess({ config: { endpoints: [{ id: "p", handler: "parts", workersMin: 1 }] }, handlers: { parts } });
    const { id } = (await e.post("/v2/p/run", { input: { a: 1 } })).body;
    await e.advance(0);
    expect((await e.get(`/v2/p/status/${id}`)).body).toMatchObject({ status: "IN_PROGRESS", output: { step: 1 } });
    await e.advance(1000);
    await e.post(`/v2/p/cancel/${id}`);
    expect(seen).toEqual([{ attempt: 1, slept: 1000, keys: ["a"] }, { jobId: id, aborted: true }]);
  });

  it("drains a long queue through one worker in order, within the advance that makes the worker ready", async () => {
    const order: number[] = [];
    const sync: Handler = (input) => {
      order.push(input.i as number);
      return input.i;
    };
    // One worker, ready after a cold start: the whole queue is waiting when it comes.
    e = await inProcess({ config: { endpoints: [{ id: "q", handler: "sync", workersMin: 0, workersMax: 1, coldStartMs: 1000 }] }, handlers: { sync } });
    const n = 20_000;
    for (let i = 0; i < n; i++) e.core.jobs.submit("q", { input: { i } }, "run");
    expect(order).toEqual([]);
    await e.advance(1000);
    expect(order.length).toBe(n);
    expect(order.every((v, i) => v === i)).toBe(true);
    expect((await e.get("/v2/q/health")).body.jobs).toMatchObject({ completed: n, inQueue: 0, inProgress: 0 });
  });

  it("gives each run its own copy of the input: what a handler changes is not what a retry runs", async () => {
    const inputs: unknown[] = [];
    const mutates: Handler = (input) => {
      inputs.push(structuredClone(input));
      input.n = (input.n as number) + 1;
      (input.list as number[]).push(9);
      throw new Error("fails");
    };
    e = await inProcess({ config: { endpoints: [{ id: "m", handler: "mutates", workersMin: 1 }] }, handlers: { mutates } });
    const { id } = (await e.post("/v2/m/run", { input: { n: 1, list: [1] } })).body;
    await e.advance(0);
    await e.post(`/v2/m/retry/${id}`);
    await e.advance(0);
    expect(inputs).toEqual([{ n: 1, list: [1] }, { n: 1, list: [1] }]);
  });

  it("reports a thrown non-Error as a string error, and a non-JSON output as a failure", async () => {
    e = await inProcess({
      config: { endpoints: [{ id: "a", handler: "throws", workersMin: 1 }, { id: "b", handler: "bigint", workersMin: 1 }] },
      handlers: { throws: () => { throw "plain string"; }, bigint: () => ({ n: 1n }) },
    });
    const a = (await e.post("/v2/a/runsync", { input: {} })).body;
    expect(a).toMatchObject({ status: "FAILED", error: "plain string" });
    const b = (await e.post("/v2/b/runsync", { input: {} })).body;
    expect(b).toMatchObject({ status: "FAILED", error: expect.stringContaining("not JSON-serialisable") });
  });

  it("fails a job whose output is over the 20 MB a worker's result may be, as a worker process's post would be refused", async () => {
    e = await inProcess({
      config: { endpoints: [{ id: "big", handler: "big", workersMin: 1 }] },
      handlers: { big: (input) => ({ blob: ((input.char as string | undefined) ?? "x").repeat(input.size as number) }) },
    });
    const over = (await e.post("/v2/big/runsync", { input: { size: 20 * 1024 * 1024 } })).body;
    expect(over).toMatchObject({ status: "FAILED", error: expect.stringMatching(/^handler output is \d+ bytes of JSON, over the 20 MB/) });
    expect(over.output).toBeUndefined();
    // Characters count as the bytes of UTF-8 they are: 11 M two-byte characters are 22 MB.
    expect((await e.post("/v2/big/runsync", { input: { size: 11 * 1024 * 1024, char: "é" } })).body).toMatchObject({ status: "FAILED" });
    expect((await e.post("/v2/big/runsync", { input: { size: 19 * 1024 * 1024 } })).body).toMatchObject({ status: "COMPLETED" });
  });

  it("loads handler modules from the config (.js and .ts), relative to the config file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-config-"));
    const file = join(dir, "emulator.config.json");
    writeFileSync(
      file,
      JSON.stringify({
        endpoints: [
          { id: "js", handler: join(fixtures, "upper-handler.js"), workersMin: 1 },
          { id: "ts", handler: join(repoFixtures, "text-generator.ts"), workersMin: 1 },
        ],
      }),
    );
    e = await inProcess({ config: file });
    const pending = e.post("/v2/js/runsync", { input: { text: "shout" } });
    await e.advance(50);
    expect((await pending).body).toMatchObject({ status: "COMPLETED", output: { upper: "SHOUT", attempt: 1, endpoint: "js" } });
    const ts = e.post("/v2/ts/runsync", { input: { prompt: "one two three", delayMs: 100 } });
    await e.advance(200);
    expect((await ts).body).toMatchObject({ status: "COMPLETED", output: { text: ["three", "two", "one"], tokens: 3 } });
  });

  it("scripted: failAttempts fails only the first attempts, with fail's message or its own", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "s", handler: "scripted", workersMin: 1 }] } });
    const attempts = async (input: object, n: number) => {
      const { id } = (await e.post("/v2/s/run", { input })).body;
      const seen: unknown[] = [];
      for (let i = 0; i < n; i++) {
        if (i > 0) await e.post(`/v2/s/retry/${id}`);
        await e.advance(0);
        const { status, error, output } = (await e.get(`/v2/s/status/${id}`)).body;
        seen.push(status === "FAILED" ? error : { status, output });
      }
      return seen;
    };
    expect(await attempts({ failAttempts: 2, output: "done" }, 3)).toEqual([
      "attempt 1 failed on purpose (failAttempts: 2)",
      "attempt 2 failed on purpose (failAttempts: 2)",
      { status: "COMPLETED", output: "done" },
    ]);
    expect(await attempts({ failAttempts: 1, fail: "disk full", output: 1 }, 2)).toEqual(["disk full", { status: "COMPLETED", output: 1 }]);
    expect(await attempts({ fail: "always" }, 2)).toEqual(["always", "always"]);
  });

  it("refuses to start with a handler module that does not exist, naming it", async () => {
    await expect(inProcess({ config: { endpoints: [{ id: "x", handler: "./missing-handler.ts" }] } })).rejects.toThrow(/endpoints\[0\]\.handler: cannot load \.\/missing-handler\.ts: no such file/);
    await expect(inProcess({ config: { endpoints: [{ id: "x", handler: "nonsense" }] } })).rejects.toThrow(/endpoints\[0\]\.handler: unknown handler "nonsense": use one of echo, scripted/);
  });
});

describe("/stream and /status-sync", () => {
  it("hands out only the chunks produced since the previous call and holds an empty poll on the virtual clock", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "s", handler: "scripted", workersMin: 1 }] } });
    const { id } = (await e.post("/v2/s/run", { input: { stream: ["a", "b", "c"], streamIntervalMs: 1000, output: "abc" } })).body;
    await e.advance(0);
    const first = await e.get(`/v2/s/stream/${id}`);
    expect(first.body).toEqual({ status: "IN_PROGRESS", stream: [{ output: "a" }] });

    let answered = false;
    const held = e.get(`/v2/s/stream/${id}`).then((r) => ((answered = true), r));
    await e.advance(999);
    expect(answered).toBe(false);
    await e.advance(1);
    expect((await held).body).toEqual({ status: "IN_PROGRESS", stream: [{ output: "b" }] });

    await e.advance(1000);
    const last = await e.get(`/v2/s/stream/${id}`);
    expect(last.body).toEqual({ status: "COMPLETED", stream: [{ output: "c" }] });
    expect((await e.get(`/v2/s/stream/${id}`)).body).toEqual({ status: "COMPLETED", stream: [] });
    expect((await e.get(`/v2/s/status/${id}`)).body.output).toBe("abc");
  });

  it("answers an empty stream poll when its wait ends", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "s", handler: "scripted", workersMin: 1 }] } });
    const { id } = (await e.post("/v2/s/run", { input: { sleepMs: 60_000 } })).body;
    const held = e.get(`/v2/s/stream/${id}?wait=2000`);
    await e.advance(2000);
    expect((await held).body).toEqual({ status: "IN_PROGRESS", stream: [] });
    const dflt = e.get(`/v2/s/stream/${id}`);
    await e.advance(10_000);
    expect((await dflt).body.stream).toEqual([]);
  });

  it("gives a non-streaming job's output as the one stream item", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "s", handler: "echo", workersMin: 1 }] } });
    const { id } = (await e.post("/v2/s/run", { input: { v: 1 } })).body;
    await e.advance(0);
    expect((await e.get(`/v2/s/stream/${id}`)).body).toEqual({ status: "COMPLETED", stream: [{ output: { v: 1 } }] });
  });

  it("streams a FAILED job's error", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "s", handler: "scripted", workersMin: 1 }] } });
    const { id } = (await e.post("/v2/s/run", { input: { stream: [1], fail: "broke" } })).body;
    await e.advance(0);
    expect((await e.get(`/v2/s/stream/${id}`)).body).toEqual({ status: "FAILED", stream: [{ output: 1 }], error: "broke" });
  });

  it("/status-sync holds until the job is final or the wait ends", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "s", handler: "scripted", workersMin: 1 }] } });
    const { id } = (await e.post("/v2/s/run", { input: { sleepMs: 5000, output: "late" } })).body;
    const short = e.get(`/v2/s/status-sync/${id}?wait=1000`);
    await e.advance(1000);
    expect((await short).body.status).toBe("IN_PROGRESS");
    const long = e.get(`/v2/s/status-sync/${id}?wait=90000`);
    await e.advance(4000);
    expect((await long).body).toMatchObject({ status: "COMPLETED", output: "late", executionTime: 5000 });
    expect((await e.get(`/v2/s/status-sync/${id}?wait=1`)).body.errors).toEqual(["query.wait: expected number >= 1000"]);
  });
});
