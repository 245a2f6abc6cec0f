import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/domain/clock.js";
import type { EndpointSpec } from "../../src/domain/endpoint.js";
import type { Job } from "../../src/domain/job.js";
import { WorkerPool, type WorkerEvent } from "../../src/domain/simulated-workers.js";
import { ProcessWall } from "../../src/compose/process-wall.js";

const spec = (over: Partial<EndpointSpec> = {}): EndpointSpec => ({
  id: "ep",
  name: "ep",
  handler: "echo",
  workersMin: 0,
  workersMax: 2,
  idleTimeout: 5,
  coldStartMs: 1000,
  executionTimeoutMs: undefined,
  createdAt: 0,
  extra: {},
  ...over,
});

const setup = (over: Partial<EndpointSpec> = {}) => {
  const clock = new VirtualClock({ mode: "manual", start: 0, wall: new ProcessWall(() => {}) });
  const events: string[] = [];
  let n = 0;
  const observe = (e: WorkerEvent) => events.push(`${e.type}:${e.endpointId}/${e.workerId}:${e.state}@${e.at}`);
  // A queue of job ids the test fills; the pool takes them from its head as it starts them.
  const waiting: string[] = [];
  const started: string[] = [];
  const queue = {
    nextQueued: () => (waiting.length ? ({ id: waiting[0] } as Job) : undefined),
    countScalingDemand: (_id: string, limit: number) => Math.min(waiting.length, limit),
    hasQueued: () => waiting.length > 0,
  };
  const links = { queue, lane: "standard" as const, start: (job: Job) => void started.push(waiting.shift()! && job.id), onReady: () => pool.dispatch(false) };
  const pool = new WorkerPool(spec(over), clock, () => `w${++n}`, links, observe);
  return { clock, events, pool, waiting, started };
};

describe("WorkerPool observer", () => {
  it("reports a worker's whole life on the virtual clock: start, cold start, job, scale-down", async () => {
    const { clock, events, pool, waiting, started } = setup();
    waiting.push("job-1");
    pool.dispatch(false);
    await clock.advance(1000);
    expect(started).toEqual(["job-1"]);
    await clock.advance(2000);
    pool.release("w1", "idle");
    await clock.advance(5000);
    expect(pool.list()).toEqual([]);
    expect(events).toEqual([
      "started:ep/w1:initializing@0",
      "state:ep/w1:idle@1000",
      "state:ep/w1:running@1000",
      "state:ep/w1:idle@3000",
      "stopped:ep/w1:idle@8000",
    ]);
  });

  it("reports warm workers as started idle, and every worker stopped when the pool stops", () => {
    const { events, pool } = setup({ workersMin: 2 });
    pool.fillMinimum(true);
    pool.stopAll();
    expect(events).toEqual(["started:ep/w1:idle@0", "started:ep/w2:idle@0", "stopped:ep/w1:idle@0", "stopped:ep/w2:idle@0"]);
  });

  it("reports a removed worker once", () => {
    const { events, pool } = setup({ workersMin: 1 });
    pool.fillMinimum(true);
    const w = pool.list()[0]!;
    pool.release(w.id, "gone");
    pool.release(w.id, "gone");
    expect(events.filter((e) => e.startsWith("stopped"))).toEqual(["stopped:ep/w1:idle@0"]);
  });
});

describe("WorkerPool dispatch", () => {
  it("gives a worker back when the job it was matched with cannot start", () => {
    const clock = new VirtualClock({ mode: "manual", start: 0, wall: new ProcessWall(() => {}) });
    const queue = { nextQueued: () => ({ id: "job-1" }) as Job, countScalingDemand: () => 1, hasQueued: () => true };
    const start = () => {
      throw new Error("the store refused");
    };
    const pool = new WorkerPool(spec({ workersMin: 1, coldStartMs: 0 }), clock, () => "w1", { queue, lane: "standard", start, onReady: () => {} });
    expect(() => pool.dispatch(false)).toThrow("the store refused");
    expect(pool.list().map((w) => [w.id, w.state, w.jobId])).toEqual([["w1", "idle", undefined]]);
  });
});

describe("WorkerPool idle timeout", () => {
  it("keeps a worker's idle timer through its jobs: no timer set or cancelled per job", async () => {
    const { clock, pool, waiting, started } = setup({ coldStartMs: 0 });
    waiting.push("job-0");
    pool.dispatch(false);
    pool.release("w1", "idle");
    let set = 0;
    let cancelled = 0;
    const at = clock.at.bind(clock);
    const cancel = clock.cancel.bind(clock);
    clock.at = (...args: Parameters<typeof clock.at>) => (set++, at(...args));
    clock.cancel = (handle) => (cancelled++, cancel(handle));
    for (let i = 1; i <= 100; i++) {
      waiting.push(`job-${i}`);
      pool.dispatch(false);
      await clock.advance(10);
      pool.release("w1", "idle");
    }
    expect(started).toHaveLength(101);
    expect({ set, cancelled }).toEqual({ set: 0, cancelled: 0 });
  });

  it("scales a worker down idleTimeout after its last job, its timer having fired while it ran", async () => {
    const { clock, events, pool, waiting } = setup({ coldStartMs: 0 });
    waiting.push("job-1");
    pool.dispatch(false); // w1 idle at 0, its timer due at 5000, then running
    await clock.advance(6000); // the timer fires while the job runs
    pool.release("w1", "idle"); // idle at 6000
    await clock.advance(4999);
    expect(pool.list().map((w) => w.id)).toEqual(["w1"]);
    waiting.push("job-2");
    pool.dispatch(false);
    await clock.advance(1);
    pool.release("w1", "idle"); // idle again at 11000: its timer, due at 11000, looks again
    await clock.advance(4999);
    expect(pool.list().map((w) => w.id)).toEqual(["w1"]);
    await clock.advance(1);
    expect(pool.list()).toEqual([]);
    expect(events.at(-1)).toBe("stopped:ep/w1:idle@16000");
  });

  it("counts the idle time again from a settings update, as before", async () => {
    const { clock, events, pool, waiting } = setup({ coldStartMs: 0 });
    waiting.push("job-1");
    pool.dispatch(false);
    pool.release("w1", "idle"); // idle at 0
    await clock.advance(3000);
    pool.update(spec({ coldStartMs: 0, idleTimeout: 4 }));
    await clock.advance(3999);
    expect(pool.list().map((w) => w.id)).toEqual(["w1"]);
    await clock.advance(1);
    expect(events.at(-1)).toBe("stopped:ep/w1:idle@7000");
  });
});
