import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { LOG_LINES_KEPT, LOG_LINES_TOTAL, LogBook, workerLog } from "../../src/domain/logbook.js";
import { inProcess, type InProcess } from "../support/in-process.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const retained = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const MB = 1024 * 1024;

let e: InProcess | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

/** Whatever the emulator keeps per job or per key in its heap, by name (maps keyed by job id, listeners). */
function perJobState(x: InProcess): Record<string, number> {
  const core = x.core as unknown as Record<string, any>;
  return {
    "notifier listeners": (core.notifier.perJob as Map<string, unknown>).size,
    "REST quota keys": core.rateLimits.rest.size as number,
    "jobs in SQLite": (core.db.prepare("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n,
    "stream chunks in SQLite": (core.db.prepare("SELECT COUNT(*) AS n FROM stream_chunks").get() as { n: number }).n,
  };
}

/**
 * After jobs of every kind end and their results expire (30 minutes of `/run`, 1 of `/runsync`),
 * nothing of them stays: the heap and the per-job structures come back to where they were.
 */
describe("memory: expired jobs leave nothing behind", () => {
  it("thousands of jobs of every kind, each with an API key of its own, then retention passes", { timeout: 120_000 }, async () => {
    e = await inProcess({
      config: {
        rateLimits: { enabled: true, rest: { minute: 1_000_000, hour: 1_000_000, day: 1_000_000 } },
        endpoints: [
          { id: "echo", handler: "echo", workersMin: 2, workersMax: 2, coldStartMs: 0 },
          { id: "script", handler: "scripted", workersMin: 2, workersMax: 2, coldStartMs: 0 },
          { id: "llm", handler: "openai", workersMin: 1, workersMax: 1, coldStartMs: 0, openai: { tokenDelayMs: 0 } },
        ],
      },
    });
    const x = e;
    const key = (i: number) => ({ authorization: `Bearer key-${i}` });
    const round = async (from: number, n: number) => {
      for (let i = from; i < from + n; i++) {
        const run = await x.request("POST", "/v2/echo/run", { input: { i, pad: "x".repeat(1024) } }, key(i));
        await x.request("GET", `/v2/echo/status/${run.body.id}`, undefined, key(i));
        if (i % 4 === 0) await x.request("POST", "/v2/echo/runsync", { input: { i } }, key(i));
        if (i % 8 === 2) {
          const s = await x.request("POST", "/v2/script/run", { input: { stream: ["a", "b"], streamIntervalMs: 10 } }, key(i));
          await x.advance(50);
          await x.request("GET", `/v2/script/stream/${s.body.id}`, undefined, key(i));
        }
        if (i % 16 === 3) {
          const s = await x.request("POST", "/v2/script/run", { input: { sleepMs: 60_000 } }, key(i));
          await x.request("POST", `/v2/script/cancel/${s.body.id}`, undefined, key(i));
        }
        if (i % 16 === 5) await x.request("POST", "/v2/llm/openai/v1/chat/completions", { messages: [{ role: "user", content: `hi ${i}` }] }, key(i));
        if (i % 50 === 0) await x.advance(1000);
      }
      // Every result expires (30 minutes of /run), and the clock runs on a while.
      await x.advance(40 * 60_000);
    };
    // What waits in the heap to be written (timeline events, journal rows: bounded logs, not
    // per-job state) goes to SQLite, as a snapshot writes it, before the heap is measured; the
    // workers' logs (bounded, below) are emptied.
    const settled = async () => {
      (x.core as unknown as { logs: LogBook }).logs.clear();
      expect((await x.post("/_emulator/snapshots/flush")).status).toBe(200);
      expect((await x.request("DELETE", "/_emulator/snapshots/flush")).status).toBe(200);
      return retained();
    };
    // The first round fills the bounded caches of paths (2,000 a method: every job's /status path
    // is new, and 1,500 rounds left a few hundred places of GET's cache to fill in the second round).
    await round(0, 2000);
    const baseline = await settled();
    const before = perJobState(x);
    await round(2000, 3000);
    const grown = ((await settled()) - baseline) / MB;
    const after = perJobState(x);
    expect(after).toEqual({ ...before, "REST quota keys": after["REST quota keys"] });
    expect(after["jobs in SQLite"]).toBe(0);
    // 3,000 rounds of about 6 requests went through: a kilobyte kept per round would be 3 MB.
    expect(grown).toBeLessThan(2);
  });

  it("the workers' and pods' logs: at most LOG_LINES_TOTAL lines in all, those of workers gone leaving first", () => {
    const book = new LogBook();
    // 600 workers of 6,000 lines each (a busy worker writes two a job): 3.6 million lines, once.
    for (let w = 0; w < 600; w++) {
      for (let i = 0; i < 6000; i++) book.append(workerLog(`w${w}`), i, "system", `job ${i} done`);
      if (w % 2 === 0) book.end(workerLog(`w${w}`));
    }
    const kept = Array.from({ length: 600 }, (_, w) => book.lines(workerLog(`w${w}`)).length);
    expect(kept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(LOG_LINES_TOTAL + 1000);
    // The newest live worker keeps its tail; workers gone went first.
    expect(kept[599]).toBeGreaterThan(0);
    expect(book.lines(workerLog("w598"))).toHaveLength(0);
    expect(kept.every((n) => n <= LOG_LINES_KEPT)).toBe(true);
  });
});
