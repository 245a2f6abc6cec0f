import { afterEach, describe, expect, it, vi } from "vitest";
import { ImageWorkers } from "../../src/launch/image-workers.js";

// How ImageWorkers decides to start a worker process when a job is queued: it counts the
// endpoint's jobs only while it may start more processes, not on every job of a warm endpoint.

type Change = { endpointId: string; job?: { status: string; queuedAt: number } };

function harness(workersMax: number, queued: () => number) {
  let listener: (change: Change) => void = () => {};
  const health = vi.fn(() => ({ jobs: { inQueue: queued(), inProgress: 0 } }));
  const started: string[] = [];
  const core = {
    notifier: { onAny: (f: (change: Change) => void) => ((listener = f), () => {}) },
    endpoints: { spec: () => ({ handler: "external", workersMax, coldStartMs: 0, idleTimeout: 5, workersMin: 0 }), specs: () => [] },
    clock: { now: () => 0 },
    jobs: { health },
    logs: { append: () => {} },
    workerProtocol: { workers: { list: () => [] } },
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
  return { images, health, started, queue };
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
