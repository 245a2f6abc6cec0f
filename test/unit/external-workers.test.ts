import { describe, expect, it } from "vitest";
import { ExternalWorkers, type ExternalWorker } from "../../src/domain/external-workers.js";
import { WORKER_FORGET_AFTER_MS } from "../../src/domain/limits.js";
import { FakeWall } from "../support/fake-wall.js";
import { inProcess } from "../support/in-process.js";

const setup = (lostAfterMs = 3000) => {
  const wall = new FakeWall();
  const lost: Array<{ id: string; jobIds: string[] }> = [];
  const workers = new ExternalWorkers(wall, { pingIntervalMs: 1000, lostAfterMs, pollHoldMs: 20_000 }, (w: ExternalWorker, jobIds) => lost.push({ id: w.id, jobIds }));
  return { wall, lost, workers };
};

describe("external workers: liveness on the wall clock", () => {
  it("counts a worker from its first request: idle, running while it holds a job", () => {
    const { workers } = setup();
    const w = workers.touch("ep", "w1", 100, "take");
    expect(workers.counts("ep")).toEqual({ idle: 1, running: 0, unhealthy: 0 });
    workers.hold(w, "job-1");
    expect(workers.counts("ep")).toEqual({ idle: 0, running: 1, unhealthy: 0 });
    expect(workers.list("ep")).toEqual([{ id: "w1", endpointId: "ep", state: "running", jobIds: ["job-1"], openPolls: 0, startedAt: 100, lastSeenAt: 100 }]);
    expect(workers.release("job-1")).toBe(w);
    expect(workers.list("ep")[0]).toMatchObject({ state: "idle", jobIds: [] });
  });

  it("loses a worker silent for lostAfterMs: its jobs are handed back, it leaves the counts", () => {
    const { wall, lost, workers } = setup();
    const w = workers.touch("ep", "w1", 0, "take");
    workers.hold(w, "job-1");
    wall.advance(2000);
    workers.touch("ep", "w1", 0, "heartbeat");
    wall.advance(2999);
    expect(lost).toEqual([]);
    wall.advance(1);
    expect(lost).toEqual([{ id: "w1", jobIds: ["job-1"] }]);
    expect(workers.holder("job-1")).toBeUndefined();
    expect(workers.counts("ep")).toEqual({ idle: 0, running: 0, unhealthy: 0 });
    expect(workers.list("ep")[0]).toMatchObject({ state: "lost", jobIds: [], reason: "no heartbeat or request for 3 s" });
    // It calls again: it is back.
    workers.touch("ep", "w1", 5, "heartbeat");
    expect(workers.list("ep")[0]).toMatchObject({ state: "idle", startedAt: 5 });
  });

  it("keeps a worker with a poll held open alive; silence counts from the poll's end", () => {
    const { wall, lost, workers } = setup();
    const w = workers.touch("ep", "w1", 0, "take");
    workers.pollStarted(w);
    wall.advance(10_000);
    expect(lost).toEqual([]);
    workers.pollEnded(w);
    wall.advance(2999);
    expect(lost).toEqual([]);
    wall.advance(3001);
    expect(lost).toHaveLength(1);
  });

  it("forgets lost and stopped workers after a while", () => {
    const { wall, workers } = setup();
    workers.touch("ep", "lost", 0, "take");
    workers.markStopped(workers.touch("ep", "stopped", 0, "take"), "stopPod");
    wall.advance(3000);
    expect(workers.list("ep").map((w) => [w.id, w.state])).toEqual([["lost", "lost"], ["stopped", "stopped"]]);
    wall.advance(WORKER_FORGET_AFTER_MS);
    expect(workers.list("ep")).toEqual([]);
  });

  it("brings a stopped worker back only when it asks for work, an unhealthy one when it beats normally", () => {
    const { workers } = setup();
    const s = workers.touch("ep", "s", 0, "take");
    workers.markStopped(s, "stopPod");
    workers.touch("ep", "s", 1, "other");
    workers.touch("ep", "s", 1, "heartbeat");
    expect(workers.list("ep")[0]!.state).toBe("stopped");
    workers.touch("ep", "s", 2, "take");
    expect(workers.list("ep")[0]!.state).toBe("idle");

    const u = workers.touch("ep", "u", 0, "heartbeat");
    workers.markUnhealthy(u, "gpu check failed");
    expect(workers.counts("ep")).toEqual({ idle: 1, running: 0, unhealthy: 1 });
    workers.touch("ep", "u", 1, "other");
    expect(workers.list("ep")[1]).toMatchObject({ state: "unhealthy", reason: "gpu check failed" });
    workers.touch("ep", "u", 2, "heartbeat");
    expect(workers.list("ep")[1]).toMatchObject({ state: "idle" });
  });

  it("keeps one wall timer per worker, however many requests it makes", () => {
    const { wall, workers } = setup();
    for (let i = 0; i < 1000; i++) workers.touch("ep", "busy", i, "other");
    expect(wall.pending).toBe(1);
    workers.forget();
    expect(workers.list()).toEqual([]);
  });
});

describe("external workers: the places of a worker that runs several jobs at once", () => {
  it("a worker's places are what it held and what it asked for at its last job-take; its free places those not taken", () => {
    const { wall, workers } = setup();
    const w = workers.touch("ep", "w1", 0, "take");
    // Before it asks: one place.
    expect(workers.freePlaces(w)).toBe(1);
    workers.asked(w, 4);
    workers.hold(w, "job-1");
    workers.hold(w, "job-2");
    expect(workers.freePlaces(w)).toBe(2);
    // Asking again with one held (the other done): places are the one held and those it asks for.
    workers.release("job-1");
    workers.asked(w, 3);
    expect(workers.freePlaces(w)).toBe(3);
    // A job it is told to stop holds its place until it lets go.
    w.stopping.add("job-2");
    workers.release("job-2");
    expect(workers.freePlaces(w)).toBe(3);
    w.stopping.clear();
    expect(workers.freePlaces(w)).toBe(4);
    // A lost worker has none.
    wall.advance(3000);
    expect(workers.freePlaces(w)).toBe(0);
  });

  it("a job-take-batch tells them: batch_size 3 with one job waiting leaves two free", async () => {
    const e = await inProcess({ config: { endpoints: [{ id: "ext", handler: "external" }] } });
    try {
      expect((await e.post("/v2/ext/run", { input: {} })).status).toBe(200);
      const taken = await e.get("/v2/ext/job-take-batch/w1?gpu=x&job_in_progress=0&batch_size=3");
      expect(taken.body).toHaveLength(1);
      const registry = e.core.workerProtocol.workers;
      expect(registry.freePlaces(registry.get("ext", "w1")!)).toBe(2);
    } finally {
      await e.close();
    }
  });
});
