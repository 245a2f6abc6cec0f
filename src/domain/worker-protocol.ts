import type { VirtualClock } from "./clock.js";
import { endpointNotFound } from "./endpoint.js";
import { EmulatorError } from "./errors.js";
import { EXTERNAL_HANDLER, ExternalWorkers } from "./external-workers.js";
import type { Job } from "./job.js";
import type { JobStore } from "./ports.js";
import type { Scheduler } from "./scheduler.js";
import { splitStreamOutput } from "./stream-chunks.js";
import type { Transitions } from "./transitions.js";

/** What a worker posts to job-done: `{ output }`, `{ error }`, or a progress update `{ status: "IN_PROGRESS", output }`. */
export interface WorkerResult {
  output?: unknown;
  error?: unknown;
  status?: unknown;
}

/**
 * The worker side of the queue, as real worker processes call it: take jobs, post results,
 * stream chunks and progress. Only endpoints whose handler is "external" hand jobs out; their
 * jobs keep every rule of the queue (execution timeout, ttl, cancel, retry, webhooks).
 */
export class WorkerProtocol {
  readonly workers = new ExternalWorkers();

  constructor(private readonly d: { clock: VirtualClock; jobs: JobStore; scheduler: Scheduler; transitions: Transitions }) {}

  /** Up to `n` queued jobs, oldest first, now IN_PROGRESS on `workerId`. */
  take(endpointId: string, workerId: string, n: number): Job[] {
    this.requireExternal(endpointId);
    const now = this.d.clock.now();
    this.workers.seen(endpointId, workerId, now);
    const taken: Job[] = [];
    for (let i = 0; i < n; i++) {
      const job = this.d.jobs.nextQueued(endpointId);
      if (!job) break;
      taken.push(
        this.d.transitions.move(
          job,
          { status: "IN_PROGRESS", startedAt: now, workerId, attempt: job.attempt + 1, timeoutAt: now + job.executionTimeoutMs, output: undefined, error: undefined },
          `taken by worker ${workerId}`,
        ),
      );
    }
    return taken;
  }

  /** A worker's result, stream chunk or progress update for a job it holds. */
  done(endpointId: string, workerId: string, jobId: string, result: WorkerResult, isStream: boolean): Job {
    this.requireExternal(endpointId);
    const now = this.d.clock.now();
    this.workers.seen(endpointId, workerId, now);
    const job = this.d.jobs.get(jobId);
    if (!job || job.endpointId !== endpointId) throw new EmulatorError("JOB_NOT_FOUND", `job "${jobId}" not found on endpoint "${endpointId}"`);
    if (job.status !== "IN_PROGRESS") {
      throw new EmulatorError("CONFLICT", `job ${jobId} is ${job.status}; a worker's result is accepted only while the job is IN_PROGRESS, and it was left unchanged`);
    }
    if (job.workerId !== workerId) throw new EmulatorError("CONFLICT", `job ${jobId} is held by worker ${job.workerId}, not ${workerId}; it was left unchanged`);
    if (isStream) {
      if (result.output !== undefined) this.d.transitions.appendChunks(jobId, splitStreamOutput(result.output));
      return job;
    }
    if (result.status === "IN_PROGRESS") {
      this.d.transitions.progress(jobId, result.output);
      return this.d.jobs.get(jobId)!;
    }
    const failed = result.error !== undefined && result.error !== null && result.error !== "";
    const next = failed
      ? this.d.transitions.finish(job, { status: "FAILED", output: result.output, error: typeof result.error === "string" ? result.error : JSON.stringify(result.error) }, now, `worker ${workerId} reported an error`)
      : this.d.transitions.finish(job, { status: "COMPLETED", output: result.output, error: undefined }, now, `worker ${workerId} returned a result`);
    return next;
  }

  /** A heartbeat. */
  ping(endpointId: string, workerId: string): void {
    this.requireExternal(endpointId);
    this.workers.seen(endpointId, workerId, this.d.clock.now());
  }

  private requireExternal(endpointId: string): void {
    const spec = this.d.scheduler.spec(endpointId);
    if (!spec) throw endpointNotFound(endpointId, this.d.scheduler.specs().map((s) => s.id));
    if (spec.handler !== EXTERNAL_HANDLER) {
      throw new EmulatorError(
        "BAD_REQUEST",
        `endpoint "${endpointId}" runs its jobs on simulated workers (handler ${typeof spec.handler === "string" ? spec.handler : spec.handler.type}); give it "handler": "external" to serve worker processes`,
      );
    }
  }
}
