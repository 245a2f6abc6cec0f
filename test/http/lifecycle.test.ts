import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const start = async (endpoint: Record<string, unknown>) => {
  e = await inProcess({ config: { endpoints: [{ id: "ep", handler: "scripted", ...endpoint }] } });
  return e;
};
const run = async (input: Record<string, unknown>, extra: Record<string, unknown> = {}) => (await e.post("/v2/ep/run", { input, ...extra })).body.id as string;
const status = async (id: string) => (await e.get(`/v2/ep/status/${id}`)).body;
const health = async () => (await e.get("/v2/ep/health")).body;

describe("simulated workers", () => {
  it("keeps workersMin warm, scales up to workersMax after a cold start, and down after idleTimeout", async () => {
    await start({ workersMin: 1, workersMax: 3, coldStartMs: 2000, idleTimeout: 5 });
    expect((await health()).workers).toMatchObject({ idle: 1, running: 0, initializing: 0 });
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await run({ sleepMs: 10_000 }));
    expect(await health()).toMatchObject({ jobs: { inQueue: 3, inProgress: 1 }, workers: { running: 1, initializing: 2 } });
    await e.advance(2000);
    expect(await health()).toMatchObject({ jobs: { inQueue: 1, inProgress: 3 }, workers: { running: 3, initializing: 0 } });
    await e.advance(8000); // the first job ends at 10 s, its worker takes the fourth
    expect((await status(ids[0]!)).status).toBe("COMPLETED");
    expect((await status(ids[3]!)).status).toBe("IN_PROGRESS");
    await e.advance(2000); // jobs 2 and 3 end at 12 s
    expect((await health()).workers).toMatchObject({ running: 1, idle: 2 });
    await e.advance(5000); // idle 5 s: scaled down to... the busy one still runs
    expect((await health()).workers).toMatchObject({ running: 1, idle: 0 });
    await e.advance(3000); // job 4 ends at 20 s
    await e.advance(5000);
    expect((await health()).workers).toMatchObject({ idle: 1, running: 0, initializing: 0 });
    expect((await health()).jobs).toMatchObject({ completed: 4 });
  });

  it("reports delayTime as queue wait including the cold start", async () => {
    await start({ workersMin: 0, workersMax: 1, coldStartMs: 3000 });
    const id = await run({ sleepMs: 1500 });
    await e.advance(5000);
    expect(await status(id)).toMatchObject({ status: "COMPLETED", delayTime: 3000, executionTime: 1500 });
  });

  it("runs jobs in FIFO order", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await run({ sleepMs: 1000, output: i }));
    for (let i = 0; i < 5; i++) {
      await e.advance(1000);
      expect((await status(ids[i]!)).status).toBe("COMPLETED");
      if (i < 4) expect((await status(ids[i + 1]!)).status).toBe("IN_PROGRESS");
    }
  });

  it("never scales for lowPriority jobs; they run on a worker that exists for other reasons", async () => {
    await start({ workersMin: 0, workersMax: 2, coldStartMs: 1000 });
    const low = await run({ sleepMs: 100 }, { policy: { lowPriority: true } });
    await e.advance(60_000);
    expect(await health()).toMatchObject({ jobs: { inQueue: 1 }, workers: { initializing: 0, idle: 0, running: 0 } });
    const normal = await run({ sleepMs: 100 });
    expect((await health()).workers.initializing).toBe(1);
    await e.advance(1000); // the new worker takes the oldest job first: the low-priority one
    expect((await status(low)).status).toBe("IN_PROGRESS");
    await e.advance(100);
    expect((await status(normal)).status).toBe("IN_PROGRESS");
    await e.advance(100);
    expect((await status(normal)).status).toBe("COMPLETED");
  });

  it("holds jobs in the queue when workersMax is 0", async () => {
    await start({ workersMin: 0, workersMax: 0 });
    const id = await run({});
    await e.advance(3_600_000);
    expect(await status(id)).toMatchObject({ status: "IN_QUEUE", delayTime: 3_600_000 });
  });
});

describe("transitions", () => {
  it("times a job out after its executionTimeout and frees the worker", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const slow = await run({ sleepMs: 60_000 }, { policy: { executionTimeout: 5000 } });
    const next = await run({ sleepMs: 10 });
    await e.advance(4999);
    expect((await status(slow)).status).toBe("IN_PROGRESS");
    await e.advance(1);
    expect(await status(slow)).toMatchObject({ status: "TIMED_OUT", executionTime: 5000, error: expect.stringContaining("5000 ms") });
    expect((await status(next)).status).toBe("IN_PROGRESS");
    await e.advance(10);
    expect((await status(next)).status).toBe("COMPLETED");
  });

  it("uses the endpoint's executionTimeoutMs, and the policy overrides it", async () => {
    await start({ workersMin: 2, workersMax: 2, executionTimeoutMs: 8000 });
    const a = await run({ sleepMs: 60_000 });
    const b = await run({ sleepMs: 60_000 }, { policy: { executionTimeout: 20_000 } });
    await e.advance(8000);
    expect((await status(a)).status).toBe("TIMED_OUT");
    expect((await status(b)).status).toBe("IN_PROGRESS");
    await e.advance(12_000);
    expect((await status(b)).status).toBe("TIMED_OUT");
  });

  it("fails a job with the handler's error and retries it under the same id with the same input", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const id = await run({ fail: "model exploded", sleepMs: 10 });
    await e.advance(10);
    expect(await status(id)).toMatchObject({ status: "FAILED", error: "model exploded" });
    const retry = await e.post(`/v2/ep/retry/${id}`);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ id, status: "IN_QUEUE" });
    const s = await status(id);
    expect(s.status === "IN_PROGRESS" || s.status === "IN_QUEUE").toBe(true);
    expect(s.error).toBeUndefined();
    expect(s.retries).toBe(1);
    await e.advance(10);
    expect(await status(id)).toMatchObject({ status: "FAILED", error: "model exploded", retries: 1 });
    expect((await health()).jobs).toMatchObject({ failed: 1, retried: 1 });
  });

  it("retries TIMED_OUT jobs but refuses other states with 400", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const slow = await run({ sleepMs: 10_000 }, { policy: { executionTimeout: 5000 } });
    await e.advance(5000);
    expect((await e.post(`/v2/ep/retry/${slow}`)).body.status).toBe("IN_QUEUE");
    const okJob = await run({});
    await e.advance(10_000);
    const refused = await e.post(`/v2/ep/retry/${okJob}`);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/COMPLETED.*only FAILED or TIMED_OUT/);
  });

  it("cancels a queued job", async () => {
    await start({ workersMin: 0, workersMax: 0 });
    const id = await run({});
    const res = await e.post(`/v2/ep/cancel/${id}`);
    expect(res.body).toEqual({ id, status: "CANCELLED" });
    expect((await health()).jobs.inQueue).toBe(0);
    expect((await status(id)).status).toBe("CANCELLED");
  });

  it("cancels a running job: its handler's signal aborts and the worker takes the next job", async () => {
    const aborted: string[] = [];
    e = await inProcess({
      config: { endpoints: [{ id: "ep", handler: "watcher", workersMin: 1, workersMax: 1 }] },
      handlers: {
        watcher: async (input, ctx) => {
          ctx.signal.addEventListener("abort", () => aborted.push(ctx.jobId));
          await ctx.sleep(Number(input.ms ?? 0));
          return "finished";
        },
      },
    });
    const a = await run({ ms: 60_000 });
    const b = await run({ ms: 10 });
    await e.advance(100);
    expect((await e.post(`/v2/ep/cancel/${a}`)).body).toEqual({ id: a, status: "CANCELLED" });
    expect(aborted).toEqual([a]);
    expect((await status(b)).status).toBe("IN_PROGRESS");
    await e.advance(10);
    expect((await status(b)).status).toBe("COMPLETED");
    await e.advance(120_000);
    expect((await status(a)).status).toBe("CANCELLED");
  });

  it("stops a handler that never looked at its signal: its sleep rejects with the reason, and a later look sees it aborted", async () => {
    const seen: unknown[] = [];
    e = await inProcess({
      config: { endpoints: [{ id: "ep", handler: "sleeper", workersMin: 1, workersMax: 1 }] },
      handlers: {
        sleeper: async (_input, ctx) => {
          try {
            await ctx.sleep(60_000);
          } catch (err) {
            seen.push((err as Error).message, ctx.signal.aborted, (ctx.signal.reason as Error).message);
            await ctx.sleep(1).catch((again: Error) => seen.push(`again: ${again.message}`));
          }
        },
      },
    });
    const a = await run({});
    await e.advance(100);
    await e.post(`/v2/ep/cancel/${a}`);
    await e.advance(0);
    expect(seen).toEqual(["job cancelled", true, "job cancelled", "again: job cancelled"]);
  });

  it("answers cancel of a finished job with its state unchanged", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const id = await run({});
    await e.advance(0);
    expect((await e.post(`/v2/ep/cancel/${id}`)).body).toEqual({ id, status: "COMPLETED" });
  });

  it("purges only queued jobs; running jobs go on", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const running = await run({ sleepMs: 1000 });
    const queued = [await run({}), await run({})];
    const res = await e.post("/v2/ep/purge-queue");
    expect(res.body).toEqual({ removed: 2, status: "completed" });
    for (const id of queued) expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
    await e.advance(1000);
    expect((await status(running)).status).toBe("COMPLETED");
  });
});

describe("ttl and result retention", () => {
  it("deletes a job when its ttl elapses, even while queued", async () => {
    await start({ workersMin: 0, workersMax: 0 });
    const id = await run({}, { policy: { ttl: 10_000 } });
    await e.advance(9999);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(200);
    await e.advance(1);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
  });

  it("ttl is a hard limit measured from submission: it stops a running job", async () => {
    const aborted: string[] = [];
    e = await inProcess({
      config: { endpoints: [{ id: "ep", handler: "slow", workersMin: 1, workersMax: 1 }] },
      handlers: { slow: async (_i, ctx) => { ctx.signal.addEventListener("abort", () => aborted.push("x")); await ctx.sleep(60_000); } },
    });
    const id = await run({}, { policy: { ttl: 20_000 } });
    await e.advance(20_000);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
    expect(aborted).toEqual(["x"]);
    expect((await health()).workers).toMatchObject({ idle: 1, running: 0 });
  });


  it("a job started by another's expiry still times out on time", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const expiring = await run({ sleepMs: 3_600_000 }, { policy: { ttl: 10_000 } });
    const next = await run({ sleepMs: 3_600_000 }, { policy: { executionTimeout: 5_000 } });
    await e.advance(10_000); // the first expires; the worker takes the second, due to time out 5 s later
    expect((await e.get(`/v2/ep/status/${expiring}`)).status).toBe(404);
    expect((await status(next)).status).toBe("IN_PROGRESS");
    await e.advance(5_000);
    expect((await status(next)).status).toBe("TIMED_OUT");
  });
  it("the default ttl is 24 hours", async () => {
    await start({ workersMin: 0, workersMax: 0 });
    const id = await run({});
    await e.advance(86_400_000 - 1);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(200);
    await e.advance(1);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
  });

  it("GET /status?ttl= sets the job's ttl from submission", async () => {
    await start({ workersMin: 0, workersMax: 0 });
    const id = await run({});
    await e.advance(5000);
    expect((await e.get(`/v2/ep/status/${id}?ttl=15000`)).status).toBe(200);
    await e.advance(9999);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(200);
    await e.advance(1);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
    expect((await e.get(`/v2/ep/status/x?ttl=abc`)).body.errors).toEqual(["query.ttl: expected integer"]);
  });

  it("keeps /run results 30 minutes after completion, then 404 and no retry", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const id = await run({ fail: "nope" });
    await e.advance(0);
    await e.advance(30 * 60_000 - 1);
    expect((await status(id)).status).toBe("FAILED");
    await e.advance(1);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
    expect((await e.post(`/v2/ep/retry/${id}`)).status).toBe(404);
  });

  it("keeps /runsync results 1 minute", async () => {
    await start({ workersMin: 1, workersMax: 1 });
    const res = await e.post("/v2/ep/runsync", { input: { output: 42 } });
    expect(res.body).toMatchObject({ status: "COMPLETED", output: 42 });
    await e.advance(59_999);
    expect((await e.get(`/v2/ep/status/${res.body.id}`)).status).toBe(200);
    await e.advance(1);
    expect((await e.get(`/v2/ep/status/${res.body.id}`)).status).toBe(404);
  });
});
