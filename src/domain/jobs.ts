import { RawJson } from "./json-text.js";
import { afterStaging } from "./payload-staging.js";
import type { VirtualClock } from "./clock.js";
import { endpointNotFound } from "./endpoint.js";
import { EmulatorError } from "./errors.js";
import { newJobId } from "./ids.js";
import { isFinal, requeuedPatch, type HealthCounts, type Job, type JobInput, type JobKind, type S3Config, type StreamItem } from "./job.js";
import type { Leaving } from "./leaving.js";
import { BATCH_TTL_MS, EXECUTION_TIMEOUT_DEFAULT_MS, TTL_DEFAULT_MS } from "./limits.js";
import type { Logger } from "./logger.js";
import { requeueLostJob } from "./lost-jobs.js";
import type { JobNotifier } from "./notifier.js";
import type { ExternalWorkers } from "./external-workers.js";
import type { JobFilter, JobStore, JobSummary } from "./ports.js";
import type { EndpointRegistry } from "./endpoint-registry.js";
import type { Scheduler } from "./scheduler.js";
import type { Transitions } from "./transitions.js";

/** A validated `/run` or `/runsync` body. */
export interface Submission {
  input: JobInput;
  webhook?: string | undefined;
  policy?: { executionTimeout?: number | undefined; lowPriority?: boolean | undefined; ttl?: number | undefined } | undefined;
  s3Config?: S3Config | undefined;
}

export interface StreamBatch {
  job: Job;
  items: StreamItem[];
}

/**
 * The queue operations of the specification, as the routes call them. Each checks that the
 * endpoint and job exist and that the move is allowed, then lets the scheduler act.
 */
export class JobService {
  private queueSeq: number;

  constructor(
    private readonly d: {
      clock: VirtualClock;
      jobs: JobStore;
      scheduler: Scheduler;
      /** Which endpoints are served, and how. */
      endpoints: EndpointRegistry;
      transitions: Transitions;
      notifier: JobNotifier;
      log: Logger;
      /** Worker processes of "external" endpoints, counted in /health. */
      external?: ExternalWorkers;
    },
  ) {
    this.queueSeq = d.jobs.maxQueueSeq();
  }

  /** A new job in the queue; `cause` is what its timeline says (which route submitted it). */
  submit(endpointId: string, sub: Submission, kind: JobKind, cause = kind === "runsync" ? "submitted with /runsync" : "submitted with /run"): Job {
    const job = this.newJob(endpointId, sub, kind, newJobId(kind, this.d.clock.now()), undefined);
    this.d.transitions.insert(job, cause);
    this.d.scheduler.pump(endpointId);
    return job;
  }

  /**
   * `submit`, with a large input written to the store first, over as many turns as it takes (see
   * `JobStore.stagePayload`): the job at once for a small input, else a promise of it.
   */
  submitStaged(endpointId: string, sub: Submission, kind: JobKind, cause?: string): Job | Promise<Job> {
    // Only a large body's input is text (json-offload): the usual submission goes straight on.
    if (!(sub.input instanceof RawJson)) return this.submit(endpointId, sub, kind, cause);
    this.requireEndpoint(endpointId); // before anything is written for it
    return afterStaging(this.d.jobs, sub, "input", (s) => this.submit(endpointId, s, kind, cause), (job, input) => job.input === input);
  }

  /**
   * A finalized batch's requests, queued in order on the endpoint's batch lane under their request
   * ids: each job carries the batch id, waits (and keeps its result) BATCH_TTL_MS unless its
   * policy says otherwise, and runs on the endpoint's batch workers.
   */
  submitBatch(endpointId: string, batchId: string, requests: ReadonlyArray<{ id: string; sub: Submission }>): void {
    this.requireEndpoint(endpointId);
    for (const r of requests) {
      const sub = { ...r.sub, policy: { ...r.sub.policy, ttl: r.sub.policy?.ttl ?? BATCH_TTL_MS } };
      this.d.transitions.insert(this.newJob(endpointId, sub, "run", r.id, batchId), `submitted with batch ${batchId}`);
    }
    this.d.scheduler.pump(endpointId);
  }

  private newJob(endpointId: string, sub: Submission, kind: JobKind, id: string, batchId: string | undefined): Job {
    const spec = this.requireEndpoint(endpointId);
    const now = this.d.clock.now();
    const ttlMs = sub.policy?.ttl ?? TTL_DEFAULT_MS;
    const job: Job = {
      id,
      endpointId,
      kind,
      status: "IN_QUEUE",
      input: sub.input,
      output: undefined,
      error: undefined,
      webhook: sub.webhook,
      s3Config: sub.s3Config,
      executionTimeoutMs: sub.policy?.executionTimeout ?? spec.executionTimeoutMs ?? EXECUTION_TIMEOUT_DEFAULT_MS,
      ttlMs,
      lowPriority: sub.policy?.lowPriority ?? false,
      createdAt: now,
      queuedAt: now,
      startedAt: undefined,
      completedAt: undefined,
      workerId: undefined,
      retries: 0,
      attempt: 0,
      queueSeq: ++this.queueSeq,
      expiresAt: now + ttlMs,
      timeoutAt: undefined,
      retainUntil: undefined,
      streamCursor: 0,
    };
    if (batchId !== undefined) job.batchId = batchId;
    return job;
  }

  /** The job, if it belongs to the endpoint; a `ttl` sets its time to live from submission. */
  status(endpointId: string, jobId: string, ttlMs?: number): Job {
    let job = this.get(endpointId, jobId);
    if (ttlMs !== undefined) {
      job = this.d.transitions.reschedule(job, { ttlMs, expiresAt: job.createdAt + ttlMs }, `ttl set to ${ttlMs} ms`);
      if (job.expiresAt <= this.d.clock.now()) {
        this.expire(job, "ttl expired (set by /status)");
        throw notFound(jobId);
      }
    }
    return job;
  }

  get(endpointId: string, jobId: string): Job {
    this.requireEndpoint(endpointId);
    const job = this.d.jobs.get(jobId);
    if (!job || job.endpointId !== endpointId) throw notFound(jobId);
    return job;
  }

  /** Waits up to `waitMs` virtual ms for the job to be final (or gone). */
  async waitUntilFinal(endpointId: string, jobId: string, waitMs: number, signal?: Leaving): Promise<Job> {
    this.get(endpointId, jobId);
    const job = await this.waitFor(jobId, waitMs, (j) => !j || isFinal(j.status), signal);
    if (!job) throw notFound(jobId);
    return job;
  }

  /**
   * The stream chunks produced since the previous call. When there are none yet and the job is
   * still running, the request is held up to `waitMs` for the next chunk or the end of the job.
   */
  async stream(endpointId: string, jobId: string, waitMs: number, signal?: AbortSignal): Promise<StreamBatch> {
    const { jobs } = this.d;
    let job: Job | undefined = this.get(endpointId, jobId);
    const hasNews = (j: Job | undefined) => !j || isFinal(j.status) || jobs.chunkCount(j.id) > j.streamCursor;
    if (!hasNews(job)) job = await this.waitFor(jobId, waitMs, hasNews, signal);
    if (!job) throw notFound(jobId);
    let items = jobs.chunks(job.id, job.streamCursor);
    if (items.length === 0 && job.streamCursor === 0 && job.status === "COMPLETED" && job.output !== undefined && jobs.chunkCount(job.id) === 0) {
      // A handler that does not stream: its output is the one item.
      items = [{ output: job.output }];
    }
    if (items.length > 0) {
      const from = job;
      job = { ...job, streamCursor: job.streamCursor + items.length };
      jobs.save(job, ["streamCursor"], from);
    }
    return { job, items };
  }

  /** Cancels a queued or running job; a job already final is answered as it is. */
  cancel(endpointId: string, jobId: string, cause?: string): Job {
    const job = this.get(endpointId, jobId);
    if (isFinal(job.status)) return job;
    const wasRunning = job.status === "IN_PROGRESS";
    if (wasRunning) this.d.scheduler.stopRun(job.id, "job cancelled");
    const next = this.d.transitions.finish(job, { status: "CANCELLED" }, this.d.clock.now(), cause ?? (wasRunning ? "cancelled while running" : "cancelled while queued"));
    this.d.scheduler.pump(endpointId);
    return next;
  }

  /** Puts a FAILED or TIMED_OUT job back in the queue under the same id with the same input. */
  retry(endpointId: string, jobId: string): Job {
    const job = this.get(endpointId, jobId);
    if (job.status !== "FAILED" && job.status !== "TIMED_OUT") {
      throw new EmulatorError("INVALID_STATE", `job ${jobId} is ${job.status}; only FAILED or TIMED_OUT jobs can be retried`);
    }
    this.d.jobs.clearChunks(job.id);
    const next = this.d.transitions.move(job, requeuedPatch(job, this.d.clock.now(), ++this.queueSeq), "retried");
    this.d.scheduler.pump(endpointId);
    return next;
  }

  /** One page of the endpoint's jobs, newest first, without their payloads; `total` counts every match. */
  recent(endpointId: string, page: Omit<JobFilter, "endpointId">): { jobs: JobSummary[]; total: number } {
    this.requireEndpoint(endpointId);
    return this.d.jobs.list({ ...page, endpointId });
  }

  /** Removes every queued job of the endpoint; running jobs go on. */
  purge(endpointId: string): number {
    this.requireEndpoint(endpointId);
    const now = this.d.clock.now();
    const ids = this.d.jobs.purgeQueued(endpointId);
    for (const id of ids) this.d.notifier.emit({ id, endpointId, job: undefined, from: "IN_QUEUE", cause: "purged", at: now });
    return ids.length;
  }

  health(endpointId: string): HealthCounts {
    this.requireEndpoint(endpointId);
    const pool = this.d.scheduler.pool(endpointId)!;
    const c = this.d.jobs.countByStatus(endpointId);
    // Batch workers are the endpoint's workers too: /health counts them with the standard ones.
    const batch = this.d.scheduler.batchPool(endpointId)?.counts() ?? { initializing: 0, idle: 0, running: 0 };
    const own = pool.counts();
    const sim = { initializing: own.initializing + batch.initializing, idle: own.idle + batch.idle, running: own.running + batch.running, unhealthy: 0 };
    const w = pool.external && this.d.external ? { ...this.d.external.counts(endpointId), initializing: 0 } : sim;
    return {
      jobs: { completed: c.COMPLETED, failed: c.FAILED, inProgress: c.IN_PROGRESS, inQueue: c.IN_QUEUE, retried: this.d.jobs.sumRetries(endpointId) },
      workers: { idle: w.idle, initializing: w.initializing, ready: w.idle, running: w.running, throttled: pool.throttled ? 1 : 0, unhealthy: w.unhealthy },
    };
  }

  /** Called by the deadline timer: ttl expiry, execution timeout, end of result retention. */
  onDeadline(job: Job, now: number): void {
    if (now >= job.expiresAt) {
      this.expire(job, "ttl expired");
      return;
    }
    if (job.status === "IN_PROGRESS" && job.timeoutAt !== undefined && now >= job.timeoutAt) {
      this.d.scheduler.stopRun(job.id, "execution timeout");
      const error = `job exceeded its execution timeout of ${job.executionTimeoutMs} ms`;
      this.d.transitions.finish(job, { status: "TIMED_OUT", error }, now, "execution timeout");
      this.d.scheduler.pump(job.endpointId);
      return;
    }
    if (isFinal(job.status) && job.retainUntil !== undefined && now >= job.retainUntil) {
      this.d.transitions.delete(job, "result retention ended");
      return;
    }
    this.d.log.warn(`job ${job.id}: deadline fired with nothing due; rescheduled`);
    this.d.transitions.reschedule(job, {}, "deadline recomputed");
  }

  /**
   * After a restart on a file database (or a restore): jobs that were running lost their worker.
   * Each is a lost job (`requeueLostJob`): back to the queue as the managed queue does (counted as
   * a retry), keeping its place at the front (it had been started before anything still queued),
   * or FAILED once it has gone back too often. Answers how many were running.
   */
  recover(): number {
    const lost = this.d.jobs.listByStatus("IN_PROGRESS");
    const now = this.d.clock.now();
    for (const job of lost) requeueLostJob(this.d, job, "worker lost (emulator restarted)", now);
    return lost.length;
  }

  /** Re-reads the queue position counter (after a reset or restore). */
  resync(): void {
    this.queueSeq = this.d.jobs.maxQueueSeq();
  }

  private expire(job: Job, cause: string): void {
    if (job.status === "IN_PROGRESS") this.d.scheduler.stopRun(job.id, cause);
    this.d.transitions.delete(job, cause);
    this.d.scheduler.pump(job.endpointId);
  }

  private requireEndpoint(endpointId: string) {
    const spec = this.d.endpoints.spec(endpointId, "QUEUE");
    if (!spec) throw endpointNotFound(endpointId, this.d.endpoints.specs("QUEUE").map((s) => s.id));
    return spec;
  }

  private waitFor(
    jobId: string,
    waitMs: number,
    done: (job: Job | undefined) => boolean,
    signal?: Leaving,
  ): Promise<Job | undefined> {
    const { clock, jobs, notifier } = this.d;
    return new Promise((resolve) => {
      const current = jobs.get(jobId);
      if (done(current) || signal?.aborted) return resolve(current);
      // A request held on virtual time: the auto clock may skip ahead for it.
      const waiting = clock.activity.waiting();
      const finish = () => {
        waiting();
        unwatch();
        clock.cancel(timer);
        signal?.removeEventListener("abort", finish);
        resolve(jobs.get(jobId));
      };
      const unwatch = notifier.watch(jobId, (change) => {
        if (done(change.job)) finish();
      });
      const timer = clock.after(waitMs, finish, "held-request");
      signal?.addEventListener("abort", finish, { once: true });
    });
  }
}

const notFound = (jobId: string) => new EmulatorError("JOB_NOT_FOUND", `job "${jobId}" not found (it may never have existed, or its ttl or result retention has ended)`);
