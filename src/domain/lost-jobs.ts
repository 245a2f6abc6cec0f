import { requeuedPatch, type Job } from "./job.js";
import { WORKER_LOST_REQUEUES_MAX } from "./limits.js";
import type { JobStore } from "./ports.js";
import type { Transitions } from "./transitions.js";

/**
 * A running job whose worker was lost, whatever lost it: a simulated worker that crashed (a
 * `worker-crash` fault), a worker process that went silent or asked for work while holding none,
 * or the emulator itself stopping while the job ran (recovered at the next start or on restore).
 *
 * The job goes back to the queue at its old place (`queueSeq` kept), one more retry, as the
 * managed queue does, and its stream starts over. A job that has already gone back
 * `WORKER_LOST_REQUEUES_MAX` times fails instead, with an error saying why, so a job that kills
 * every worker that takes it does not loop for ever. `cause` says what lost the worker; the
 * timeline gets it with "; re-queued" or "; failed after N retries".
 *
 * The only place a lost job is put back: every path above calls it.
 */
export function requeueLostJob(d: { jobs: Pick<JobStore, "clearChunks">; transitions: Pick<Transitions, "move" | "finish"> }, job: Job, cause: string, now: number): Job {
  if (job.retries >= WORKER_LOST_REQUEUES_MAX) {
    return d.transitions.finish(job, { status: "FAILED", output: undefined, error: lostJobError(cause, job.retries) }, now, `${cause}; failed after ${job.retries} retries`);
  }
  d.jobs.clearChunks(job.id);
  return d.transitions.move(job, requeuedPatch(job, now, job.queueSeq), `${cause}; re-queued`);
}

/** The error of a lost job that had already gone back to the queue `retries` times. */
export function lostJobError(cause: string, retries: number): string {
  return `${cause}; the job had already gone back to the queue ${retries} time(s), so it fails instead`;
}
