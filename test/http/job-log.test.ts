import { afterEach, describe, expect, it } from "vitest";
import { duration } from "../../src/domain/job-log.js";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

/** An emulator logging at `level` into `lines`. */
async function logging(level: "info" | "warn", lines: string[]) {
  e = await inProcess({
    config: { logLevel: level, endpoints: [{ id: "work", handler: "scripted", workersMin: 1, workersMax: 2, coldStartMs: 2000 }] },
    log: (l: string) => lines.push(l),
  });
  return e;
}

/** The lines about job `id`, without their time stamps. */
const about = (lines: string[], id: string) => lines.filter((l) => l.includes(`job ${id} `)).map((l) => l.replace(/^\S+ info {2}/, ""));

describe("the info log", () => {
  it("has one readable line when a job ends: completed, failed, timed out, cancelled, expired", async () => {
    const lines: string[] = [];
    await logging("info", lines);
    const submit = async (input: object, policy?: object) => (await e.post("/v2/work/run", { input, ...(policy ? { policy } : {}) })).body.id as string;

    const done = await submit({ sleepMs: 3000, output: "ok" });
    await e.advance(3000);
    const worker = (await e.get(`/v2/work/status/${done}`)).body.workerId as string;
    expect(about(lines, done)).toEqual([`job ${done} on work COMPLETED after 3.0 s (queued 0 ms, ran 3.0 s on worker ${worker})`]);

    const failed = await submit({ sleepMs: 500, fail: "out of\nmemory" });
    await e.advance(500);
    expect(about(lines, failed)).toEqual([expect.stringMatching(new RegExp(`^job ${failed} on work FAILED after 500 ms \\(queued 0 ms, ran 500 ms on worker \\w+\\): out of memory$`))]);
    await e.post(`/v2/work/retry/${failed}`);
    await e.advance(500);
    expect(about(lines, failed)[1]).toMatch(/FAILED after 1\.0 s \(queued 0 ms, ran 500 ms on worker \w+, attempt 2\): out of memory$/);

    const slow = await submit({ sleepMs: 600_000 }, { executionTimeout: 60_000 });
    await e.advance(60_000);
    expect(about(lines, slow)).toEqual([expect.stringMatching(/ on work TIMED_OUT after 1 min \(queued 0 ms, ran 1 min on worker \w+\): job exceeded its execution timeout of 60000 ms$/)]);

    // Two workers busy, so the third job waits (the second worker's cold start takes 2 s).
    const busy = [await submit({ sleepMs: 600_000 }), await submit({ sleepMs: 600_000 })];
    const waiting = await submit({ sleepMs: 10 });
    await e.advance(1000);
    await e.post(`/v2/work/cancel/${waiting}`);
    expect(about(lines, waiting)).toEqual([`job ${waiting} on work CANCELLED while queued after 1.0 s (queued 1.0 s)`]);
    const expiring = await submit({ sleepMs: 10 }, { ttl: 10_000 });
    await e.advance(10_000);
    expect(about(lines, expiring)).toEqual([`job ${expiring} on work EXPIRED after 10 s (queued 10 s): ttl expired while IN_QUEUE`]);
    await e.post(`/v2/work/cancel/${busy[0]}`);
    expect(about(lines, busy[0]!)).toEqual([expect.stringMatching(/ on work CANCELLED while running after 11 s \(queued 0 ms, ran 11 s on worker \w+\)$/)]);

    // Request lines go on as before, and nothing else speaks of jobs.
    expect(lines.some((l) => / info {2}POST \/v2\/work\/run 200 /.test(l))).toBe(true);
    expect(lines.filter((l) => / info {2}job /.test(l))).toHaveLength(7);
  });

  it("has no job lines above info", async () => {
    const lines: string[] = [];
    await logging("warn", lines);
    await e.post("/v2/work/run", { input: {} });
    await e.advance(10);
    expect(lines).toEqual([]);
  });
});

describe("durations in the log", () => {
  it.each([
    [0, "0 ms"],
    [999, "999 ms"],
    [1000, "1.0 s"],
    [9_950, "9.9 s"],
    [12_000, "12 s"],
    [60_000, "1 min"],
    [200_000, "3 min 20 s"],
    [3_600_000, "1 h"],
    [7_500_000, "2 h 5 min"],
    [86_400_000, "1 d"],
    [7 * 86_400_000 + 3_600_000, "7 d 1 h"],
  ])("%d ms is %s", (ms, text) => {
    expect(duration(ms)).toBe(text);
  });
});
