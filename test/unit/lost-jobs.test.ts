import { describe, expect, it } from "vitest";
import { jobWorld, queuedJob } from "../support/jobs.js";
import type { Job } from "../../src/domain/job.js";
import { WORKER_LOST_REQUEUES_MAX } from "../../src/domain/limits.js";
import { lostJobError, requeueLostJob } from "../../src/domain/lost-jobs.js";

const world = jobWorld;

const running = (over: Partial<Job> = {}): Job =>
  queuedJob("job-1", { endpointId: "ep", status: "IN_PROGRESS", output: { partial: true }, startedAt: 2000, workerId: "w1", attempt: 1, queueSeq: 7, timeoutAt: 602_000, streamCursor: 2, ...over });

describe("requeueLostJob: a running job whose worker was lost", () => {
  it("goes back to the queue at its old place, one more retry, its stream starting over", () => {
    const w = world();
    const job = running();
    w.jobs.insert(job);
    w.jobs.appendChunks(job.id, [{ output: "a" }, { output: "b" }]);
    const next = requeueLostJob(w, job, "worker w1 crashed", w.clock.now());
    expect(next).toMatchObject({ status: "IN_QUEUE", retries: 1, queueSeq: 7, queuedAt: 10_000, workerId: undefined, startedAt: undefined, timeoutAt: undefined, output: undefined, streamCursor: 0 });
    expect(w.jobs.get(job.id)).toEqual(next);
    expect(w.jobs.chunkCount(job.id)).toBe(0);
    expect(w.causes()).toEqual(["worker w1 crashed; re-queued"]);
  });

  it(`is re-queued at most ${WORKER_LOST_REQUEUES_MAX} times: the 4th loss fails it with an error saying why`, () => {
    expect(WORKER_LOST_REQUEUES_MAX).toBe(3); // the README's promise
    const w = world();
    let job = running();
    w.jobs.insert(job);
    for (let loss = 1; loss <= 3; loss++) {
      job = requeueLostJob(w, job, `worker w${loss} lost`, w.clock.now());
      expect(job).toMatchObject({ status: "IN_QUEUE", retries: loss });
      job = w.transitions.move(job, { status: "IN_PROGRESS", startedAt: w.clock.now(), workerId: `w${loss + 1}`, attempt: job.attempt + 1 }, "started");
    }
    w.jobs.appendChunks(job.id, [{ output: "kept" }]);
    const failed = requeueLostJob(w, job, "worker w4 lost", 20_000);
    expect(failed).toMatchObject({ status: "FAILED", retries: 3, completedAt: 20_000, output: undefined });
    expect(failed.error).toBe("worker w4 lost; the job had already gone back to the queue 3 time(s), so it fails instead");
    expect(failed.error).toBe(lostJobError("worker w4 lost", 3));
    expect(failed.retainUntil).toBeGreaterThan(20_000);
    expect(w.jobs.get(job.id)).toEqual(failed);
    // A failed job's chunks stay readable, as any failed job's do.
    expect(w.jobs.chunkCount(job.id)).toBe(1);
    expect(w.causes().at(-1)).toBe("worker w4 lost; failed after 3 retries");
  });

  it("counts every earlier return to the queue, whatever lost the worker then", () => {
    const w = world();
    const job = running({ retries: 3 });
    w.jobs.insert(job);
    expect(requeueLostJob(w, job, "worker lost (emulator restarted)", w.clock.now())).toMatchObject({ status: "FAILED", error: lostJobError("worker lost (emulator restarted)", 3) });
  });
});
