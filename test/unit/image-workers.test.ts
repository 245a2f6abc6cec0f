import { afterEach, describe, expect, it, vi } from "vitest";
import { ExternalWorkers } from "../../src/domain/external-workers.js";
import { ImageWorkers } from "../../src/launch/image-workers.js";
import { FakeWall } from "../support/fake-wall.js";

// How ImageWorkers decides to start a worker process when a job is queued: it counts the
// endpoint's jobs only while it may start more processes, not on every job of a warm endpoint.

type Change = { endpointId: string; job?: { status: string; queuedAt: number } };

function harness(workersMax: number, queued: () => number, inProgress = () => 0) {
  let listener: (change: Change) => void = () => {};
  const health = vi.fn(() => ({ jobs: { inQueue: queued(), inProgress: inProgress() } }));
  // The registry of worker processes as they call (the worker protocol's own).
  const registry = new ExternalWorkers(new FakeWall(), { pingIntervalMs: 10_000, lostAfterMs: 60_000, pollHoldMs: 20_000 }, () => {});
  const started: string[] = [];
  const core = {
    notifier: { onAny: (f: (change: Change) => void) => ((listener = f), () => {}) },
    endpoints: { spec: () => ({ handler: "external", workersMax, coldStartMs: 0, idleTimeout: 5, workersMin: 0 }), specs: () => [] },
    clock: { now: () => 0 },
    jobs: { health },
    logs: { append: () => {} },
    workerProtocol: { workers: registry },
    loadBalancers: { launcherOf: () => undefined },
  };
  const workers = {
    start: (spec: { endpoint: string }) => {
      started.push(spec.endpoint);
      return { workerId: `w${started.length}`, exited: new Promise(() => {}), stop: async () => {} };
    },
  };
  const images = new ImageWorkers({ core, workers, launchOf: () => ({ command: ["python3"], env: {} }), output: () => {} } as unknown as ConstructorParameters<typeof ImageWorkers>[0]);
  const queue = () => listener({ endpointId: "ep", job: { status: "IN_QUEUE", queuedAt: 0 } });
  return { images, health, started, queue, registry };
}

let close: (() => void) | undefined;
afterEach(() => close?.());

describe("ImageWorkers: a process for each job waiting, up to workersMax", () => {
  it("once all the processes it may have run, a queued job counts nothing (a warm call asks no count of the jobs)", () => {
    const h = harness(1, () => 1);
    close = () => h.images.close();
    h.queue();
    expect(h.started).toEqual(["ep"]);
    expect(h.health).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 5; i++) h.queue();
    expect(h.started).toEqual(["ep"]);
    expect(h.health).toHaveBeenCalledTimes(1);
  });

  it("below workersMax, the jobs waiting still start more processes", () => {
    let waiting = 1;
    const h = harness(3, () => waiting);
    close = () => h.images.close();
    h.queue();
    expect(h.started).toHaveLength(1);
    waiting = 3;
    h.queue();
    expect(h.started).toHaveLength(3);
    waiting = 5;
    h.queue();
    expect(h.started).toHaveLength(3);
  });
});

describe("ImageWorkers: the free places of processes that run several jobs at once", () => {
  /** One job queued starts a process, which calls asking for `places` jobs at once and takes it. */
  function firstProcessTakes(places: number) {
    const jobs = { waiting: 1, running: 0 };
    const h = harness(3, () => jobs.waiting, () => jobs.running);
    close = () => h.images.close();
    h.queue();
    expect(h.started).toHaveLength(1);
    const w1 = h.registry.touch("ep", "w1", 0, "take");
    h.registry.asked(w1, places);
    h.registry.hold(w1, "j1");
    Object.assign(jobs, { waiting: 0, running: 1 });
    return { h, jobs, w1 };
  }

  it("a job that fits in a running process's free places starts no process; past them, one more for each job", () => {
    // Its concurrency is four.
    const { h, jobs, w1 } = firstProcessTakes(4);
    // Three more queued, one by one: each fits in its free places.
    for (let i = 2; i <= 4; i++) {
      jobs.waiting = 1;
      h.queue();
      expect(h.started).toHaveLength(1);
      h.registry.hold(w1, `j${i}`);
      Object.assign(jobs, { waiting: 0, running: i });
    }
    // Full: a fifth starts a second process, and a sixth, while that one has not called, a third.
    jobs.waiting = 1;
    h.queue();
    expect(h.started).toHaveLength(2);
    jobs.waiting = 2;
    h.queue();
    expect(h.started).toHaveLength(3);
  });

  it("one job at a time (a process that asks for one), each job waiting beyond the idle processes starts one", () => {
    const { h, jobs } = firstProcessTakes(1);
    jobs.waiting = 1;
    h.queue();
    expect(h.started).toHaveLength(2);
  });
});
