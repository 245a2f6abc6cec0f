import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/domain/clock.js";
import type { EndpointSpec } from "../../src/domain/endpoint.js";
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
  const pool = new WorkerPool(spec(over), clock, () => `w${++n}`, () => {}, observe);
  return { clock, events, pool };
};

describe("WorkerPool observer", () => {
  it("reports a worker's whole life on the virtual clock: start, cold start, job, scale-down", async () => {
    const { clock, events, pool } = setup();
    pool.scaleFor(() => 1);
    await clock.advance(1000);
    const w = pool.takeIdle()!;
    pool.markRunning(w, "job-1");
    await clock.advance(2000);
    pool.markIdle(w);
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
    pool.remove(w);
    pool.remove(w);
    expect(events.filter((e) => e.startsWith("stopped"))).toEqual(["stopped:ep/w1:idle@0"]);
  });
});
