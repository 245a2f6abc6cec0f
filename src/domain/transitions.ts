import type { VirtualClock } from "./clock.js";
import type { Deadlines } from "./deadlines.js";
import { EmulatorError } from "./errors.js";
import { canMove, nextDeadline, type Job, type StreamItem } from "./job.js";
import { RETENTION_BATCH_MS, RETENTION_RUN_MS, RETENTION_RUNSYNC_MS } from "./limits.js";
import type { JobNotifier } from "./notifier.js";
import type { JobStore } from "./ports.js";

/**
 * The only writer of job state. Each change is checked against the specification's transitions,
 * written in one transaction, re-arms the deadline timer and is announced to waiters.
 */
export class Transitions {
  constructor(
    private readonly clock: VirtualClock,
    private readonly jobs: JobStore,
    private readonly deadlines: Deadlines,
    private readonly notifier: JobNotifier,
  ) {}

  insert(job: Job, cause: string): void {
    this.jobs.insert(job);
    this.deadlines.schedule(nextDeadline(job));
    // At the job's own creation time: on the real clock, a later reading of it could be a
    // millisecond on, and the timeline would put the submission after the job's createdAt.
    this.announce(job.id, job.endpointId, job, undefined, cause, job.createdAt);
  }

  /** Moves a job to `patch.status` (which must be allowed) with the other fields of `patch`. */
  move(job: Job, patch: Partial<Job> & Pick<Job, "status">, cause: string): Job {
    if (!canMove(job.status, patch.status)) {
      throw new EmulatorError("INVALID_STATE", `job ${job.id} cannot move from ${job.status} to ${patch.status}`);
    }
    const next: Job = { ...job, ...patch };
    this.jobs.save(next, Object.keys(patch) as (keyof Job)[], job);
    this.deadlines.schedule(nextDeadline(next));
    this.announce(job.id, job.endpointId, next, job.status, cause);
    return next;
  }

  /** Ends a job (COMPLETED, FAILED, TIMED_OUT, CANCELLED) and starts its result retention. */
  finish(job: Job, patch: Pick<Job, "status"> & Partial<Job>, now: number, cause: string): Job {
    const retention = job.batchId !== undefined ? RETENTION_BATCH_MS : job.kind === "runsync" ? RETENTION_RUNSYNC_MS : RETENTION_RUN_MS;
    // The fields before the spread: node 20 builds `{ ...patch, completedAt: now }` on a slow
    // path (about 2 µs, measured), the other order in a few dozen ns.
    return this.move(job, { completedAt: now, timeoutAt: undefined, retainUntil: now + retention, ...patch }, cause);
  }

  /** A running job's progress output (visible on `/status`). */
  progress(jobId: string, output: unknown): void {
    const job = this.jobs.get(jobId);
    if (!job || job.status !== "IN_PROGRESS") return;
    const next = { ...job, output: output === undefined ? undefined : (JSON.parse(JSON.stringify(output)) as unknown) };
    this.jobs.save(next, ["output"], job);
    this.announce(job.id, job.endpointId, next, job.status, "progress");
  }

  appendChunks(jobId: string, items: StreamItem[]): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    this.jobs.appendChunks(jobId, items);
    this.announce(job.id, job.endpointId, job, job.status, `streamed ${items.length} chunk(s)`);
  }

  /** Changes where the job's deadline falls (e.g. a new ttl) without a transition. */
  reschedule(job: Job, patch: Partial<Job>, cause: string): Job {
    const next: Job = { ...job, ...patch };
    this.jobs.save(next, Object.keys(patch) as (keyof Job)[], job);
    this.deadlines.schedule(nextDeadline(next));
    this.announce(job.id, job.endpointId, next, job.status, cause);
    return next;
  }

  /** Records something that happened to a job without changing it (a fault firing). */
  note(job: Job, cause: string): void {
    this.announce(job.id, job.endpointId, job, job.status, cause);
  }

  delete(job: Job, cause: string): void {
    this.jobs.delete(job.id);
    this.notifier.emit({ id: job.id, endpointId: job.endpointId, job: undefined, deleted: job, from: job.status, cause, at: this.clock.now() });
  }

  private announce(id: string, endpointId: string, job: Job | undefined, from: Job["status"] | undefined, cause: string, at = this.clock.now()): void {
    this.notifier.emit({ id, endpointId, job, from, cause, at });
  }
}
