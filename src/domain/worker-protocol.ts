import type { Release } from "./activity.js";
import { WorkerWaits } from "./worker-waits.js";
import { afterStaging } from "./payload-staging.js";
import type { VirtualClock } from "./clock.js";
import { endpointNotFound } from "./endpoint.js";
import { EmulatorError } from "./errors.js";
import { EXTERNAL_HANDLER, ExternalWorkers, type Contact, type ExternalWorker, type ExternalWorkerSettings } from "./external-workers.js";
import { HeldPolls } from "./held-polls.js";
import { StopChannel } from "./stop-channel.js";
import type { Job, Lane } from "./job.js";
import type { Leaving } from "./leaving.js";
import { STOP_REPEAT_MS, WORKER_ERROR_DELAY_MS } from "./limits.js";
import type { Logger } from "./logger.js";
import type { JobStore } from "./ports.js";
import type { EndpointRegistry } from "./endpoint-registry.js";
import type { Scheduler } from "./scheduler.js";
import type { Transitions } from "./transitions.js";
import { applyChunk, applyResult, resultProblem, type WorkerResult } from "./worker-results.js";
import { requeueLostJob } from "./lost-jobs.js";

export type { WorkerResult } from "./worker-results.js";

/** What a heartbeat carries besides the worker: the library sends its job ids and its version. */
export interface Heartbeat {
  /** The jobs the worker says it holds; undefined when the heartbeat does not say. */
  jobIds?: string[] | undefined;
  version?: string | undefined;
  /** A failed start-up check (`status=unhealthy`), with the check's name and reason. */
  unhealthy?: string | undefined;
}

/** A worker asked to be stopped after a job (`stopPod`, the library's `refresh_worker`): whoever runs it replaces it. */
export interface WorkerStopped {
  endpointId: string;
  workerId: string;
  reason: string;
}

interface TakeRequest {
  worker: ExternalWorker;
  n: number;
}

/**
 * The worker side of the queue, as the service's worker library speaks it: take jobs (held open
 * while the queue is empty), post results, stream chunks and progress, hear which jobs to stop,
 * beat. Only endpoints whose handler is "external" hand jobs out; their jobs keep every rule of
 * the queue (execution timeout, ttl, cancel, retry, webhooks), and a cancel, timeout or expiry
 * reaches the worker through its stop channel.
 */
export class WorkerProtocol {
  readonly workers: ExternalWorkers;
  private readonly takes: HeldPolls<string, TakeRequest, Job[]>;
  private readonly stopChannel: StopChannel;
  private readonly stoppedListeners = new Set<(e: WorkerStopped) => void>();
  /** Refusals of job-take and job-stop waiting out WORKER_ERROR_DELAY_MS. */
  private readonly refusals: HeldPolls<string, undefined, undefined>;
  private closing = false;
  private readonly waits: WorkerWaits;

  constructor(private readonly d: { clock: VirtualClock; jobs: JobStore; scheduler: Scheduler; endpoints: EndpointRegistry; transitions: Transitions; settings: ExternalWorkerSettings; log: Logger }) {
    this.workers = new ExternalWorkers(d.clock.wall, d.settings, (w, jobIds) => this.lost(w, jobIds), d.clock.activity);
    this.takes = new HeldPolls(d.clock.wall, () => []);
    this.stopChannel = new StopChannel(d.clock.wall);
    this.refusals = new HeldPolls(d.clock.wall, () => undefined);
    this.waits = new WorkerWaits({ clock: d.clock, jobs: d.jobs, scheduler: d.scheduler, workers: this.workers, lostAfterMs: d.settings.lostAfterMs, onReady: (id) => this.wake(id) });
  }

  /**
   * A worker process was started for the endpoint: until it first calls (or `cancel` is called,
   * its process having exited), it is starting, which is real work (see Activity); with
   * `coldStartMs`, it starts on the virtual clock instead (see WorkerWaits). Returns `cancel`.
   */
  expect(endpointId: string, workerId: string, coldStartMs?: number): Release {
    return this.waits.expect(endpointId, workerId, coldStartMs);
  }

  /** Whether the worker may be given jobs: not while its cold start runs (see WorkerWaits). */
  ready(endpointId: string, workerId: string): boolean {
    return this.waits.ready(endpointId, workerId);
  }

  /** Worker processes of the endpoint started by minipod that have not called yet (initializing). */
  starting(endpointId: string): number {
    return this.waits.starting(endpointId);
  }

  /**
   * Calls `fn` when a worker asks to be stopped after a job (`stopPod`): the platform then replaces
   * the worker with a fresh one, and so do `minipod worker` and createEmulator's workers.
   */
  onWorkerStopped(fn: (e: WorkerStopped) => void): () => void {
    this.stoppedListeners.add(fn);
    return () => this.stoppedListeners.delete(fn);
  }

  /** Once the emulator is closing, polls are answered at once. */
  get isClosing(): boolean {
    return this.closing;
  }

  /**
   * Up to `n` queued jobs of the worker's lane (`/run` traffic, or batch requests for a batch
   * worker), oldest first, now IN_PROGRESS on the worker; held up to the poll hold
   * while there are none. `jobInProgress: false` (the library's `job_in_progress=0`) says the
   * worker holds no job: any minipod still counts on it were lost on the way (a restarted worker,
   * a result that never arrived) and go back to the queue first.
   */
  async take(endpointId: string, workerId: string, n: number, jobInProgress: boolean | undefined, signal?: Leaving, lane: Lane = "standard"): Promise<Job[]> {
    await this.requireExternalSlowly(endpointId, signal);
    const w = this.touch(endpointId, workerId, "take");
    w.lane = lane;
    // A request of a process that has exited, arriving late: nothing for it.
    if (w.status === "lost") return [];
    if (jobInProgress === false) w.stopping.clear();
    if (jobInProgress === false && w.jobs.size > 0) this.dropHeldJobs(w);
    // What it holds and what it asks for: the jobs it may run at once (the scaler counts its free places).
    this.workers.asked(w, n);
    const now = this.takeNow(w, n);
    if (now.length > 0 || this.closing) return now;
    return this.held(w, this.takes.wait(endpointId, { worker: w, n }, this.d.settings.pollHoldMs, signal));
  }

  /** The stop channel: ids of the worker's jobs to stop (cancelled, timed out, expired); held while there are none. */
  async stops(endpointId: string, workerId: string, signal?: Leaving): Promise<string[]> {
    await this.requireExternalSlowly(endpointId, signal);
    const w = this.touch(endpointId, workerId, "other");
    // A stopped worker is on its way out: the library waits for this poll before it exits.
    const hold = this.closing || w.status === "stopped" ? 0 : this.d.settings.pollHoldMs;
    // A stop the worker heard before it had the job in hand (it took the job a moment ago and had
    // not started it: the library finds no job to stop) is sent again until it lets go of the job.
    if (hold === 0 || w.stopping.size === 0) return this.held(w, this.stopChannel.poll(w, hold, signal));
    const ids = await this.held(w, this.stopChannel.poll(w, Math.min(hold, STOP_REPEAT_MS), signal));
    return ids.length > 0 || signal?.aborted ? ids : [...w.stopping];
  }

  /** A worker's result or progress update for a job it holds (job-done); `streamed` ends a streamed job. */
  done(endpointId: string, workerId: string, jobId: string, result: WorkerResult, streamed: boolean): Job {
    const progress = result.status === "IN_PROGRESS";
    // The library sends progress from a thread of its own, so an update may arrive just after the
    // result it preceded: answered with the job as it is, changing nothing.
    const late = progress ? this.finishedBy(endpointId, workerId, jobId) : undefined;
    if (late) return late;
    // Its result, even one refused: it has let go of the job.
    if (!progress) this.workers.get(endpointId, workerId)?.stopping.delete(jobId);
    const { job, worker } = this.heldJob(endpointId, workerId, jobId);
    const problem = resultProblem(result as WorkerResult & Record<string, unknown>);
    if (problem !== undefined) {
      // The library does not post a refused result again, so the job would hang until its
      // timeout: it fails now, saying why, and the worker hears the refusal.
      if (progress) throw new EmulatorError("BAD_REQUEST", `${problem}; job ${jobId} was left unchanged`);
      this.workers.release(jobId);
      this.d.transitions.finish(
        job,
        { status: "FAILED", output: undefined, error: `worker ${workerId}'s result was refused: ${problem}` },
        this.d.clock.now(),
        `worker ${workerId}'s result was refused`,
      );
      throw new EmulatorError("BAD_REQUEST", `${problem}; job ${jobId} is FAILED with this error`);
    }
    if (!progress) this.workers.release(jobId);
    const next = applyResult(this.d, job, workerId, result, streamed, this.d.clock.now());
    if (result.stopPod === true) {
      const reason = `asked to be stopped after job ${jobId} (stopPod)`;
      this.workers.markStopped(worker, reason);
      this.releaseWorkerPolls(worker);
      for (const fn of [...this.stoppedListeners]) fn({ endpointId, workerId, reason });
    }
    return next;
  }

  /** `done`, with a large output written to the store first (see `JobStore.stagePayload`): a promise then. */
  doneStaged(endpointId: string, workerId: string, jobId: string, result: WorkerResult, streamed: boolean): Job | Promise<Job> {
    return afterStaging(this.d.jobs, result, "output", (r) => this.done(endpointId, workerId, jobId, r, streamed), (job, output) => job.output === output);
  }

  /** One stream chunk of a job the worker holds (job-stream). */
  chunk(endpointId: string, workerId: string, jobId: string, result: WorkerResult): Job {
    const { job } = this.heldJob(endpointId, workerId, jobId);
    applyChunk(this.d.transitions, job, result);
    return job;
  }

  /**
   * A heartbeat. Jobs it lists that are no longer the worker's (cancelled, timed out, expired,
   * or re-queued while the worker was thought lost) are sent to its stop channel.
   */
  ping(endpointId: string, workerId: string, beat: Heartbeat): void {
    this.requireExternal(endpointId);
    const now = this.d.clock.now();
    const w = this.touch(endpointId, workerId, beat.unhealthy ? "other" : "heartbeat");
    this.workers.heartbeat(w, now, beat.jobIds, beat.version);
    if (beat.unhealthy) {
      this.workers.markUnhealthy(w, beat.unhealthy);
      this.d.log.warn(`worker ${workerId} of endpoint ${endpointId} reported a failed start-up check: ${beat.unhealthy}`);
    }
    const stale = (beat.jobIds ?? []).filter((id) => !w.jobs.has(id) && this.notTheWorkers(id, workerId));
    if (stale.length > 0) this.stopChannel.send(w, stale);
  }

  /**
   * minipod stops the worker (`minipod worker` stopping its process): it is marked stopped and its
   * held polls are answered now, since the library waits for them before it exits.
   */
  stopWorker(endpointId: string, workerId: string): void {
    const w = this.workers.get(endpointId, workerId);
    if (!w) throw new EmulatorError("NOT_FOUND", `no worker "${workerId}" on endpoint "${endpointId}"`);
    this.workers.markStopped(w, "stopped by minipod");
    this.releaseWorkerPolls(w);
  }

  /**
   * The worker's process exited (its launcher saw it: `minipod worker`, `startWorker`): it is lost
   * at once, rather than after its heartbeats stop, so no job is routed to it and the jobs it held
   * go back to the queue now. If the same worker id calls again (a restart), it is back.
   */
  workerExited(endpointId: string, workerId: string, reason: string): void {
    const w = this.workers.get(endpointId, workerId);
    if (!w) return;
    this.releaseWorkerPolls(w);
    this.stopChannel.forget(w);
    w.exitedWall = this.d.clock.wall.now();
    if (w.status === "lost") return;
    this.workers.lose(w, reason);
  }

  /** New jobs (or capacity) on an endpoint: held job-take polls get them, oldest poll first. */
  wake(endpointId: string): void {
    if (this.d.jobs.hasQueued(endpointId, "standard") || this.d.jobs.hasQueued(endpointId, "batch")) this.waits.awaitWorker(endpointId);
    if (!this.takes.waiting(endpointId)) return;
    this.takes.offer(endpointId, ({ worker, n }) => {
      const jobs = this.takeNow(worker, n);
      return jobs.length > 0 ? jobs : undefined;
    });
  }

  /**
   * A job minipod ended while its worker ran it (cancel, execution timeout, ttl): the worker is told
   * to stop it, and shown running it until it lets go of it (a heartbeat that no longer lists it, a
   * job-take saying it holds none, or its result).
   */
  stopJob(jobId: string): void {
    const w = this.workers.release(jobId);
    if (!w) return;
    w.stopping.add(jobId);
    this.stopChannel.send(w, [jobId]);
  }

  /** The endpoint is gone (deleted, reset): its polls are answered and its workers forgotten. */
  detach(endpointId: string): void {
    this.takes.release(endpointId);
    for (const w of this.workers.records(endpointId)) {
      this.stopChannel.forget(w);
      this.stopChannel.release(w);
    }
    this.workers.forget(endpointId);
  }

  /** Reset or snapshot restore: every poll answered, every worker forgotten (workers that call again start afresh). */
  reset(): void {
    this.takes.release();
    this.stopChannel.release();
    this.stopChannel.forget();
    this.workers.forget();
  }

  /** Shutdown: every held poll is answered now, and later ones at once. */
  close(): void {
    this.closing = true;
    this.takes.release();
    this.stopChannel.release();
    this.refusals.release();
  }

  private touch(endpointId: string, workerId: string, contact: Contact): ExternalWorker {
    const w = this.workers.touch(endpointId, workerId, this.d.clock.now(), contact);
    this.waits.heard(endpointId, workerId);
    return w;
  }

  private async held<T>(w: ExternalWorker, poll: Promise<T>): Promise<T> {
    this.workers.pollStarted(w);
    try {
      return await poll;
    } finally {
      this.workers.pollEnded(w);
    }
  }

  private takeNow(w: ExternalWorker, n: number): Job[] {
    if (w.status === "stopped" || !this.waits.ready(w.endpointId, w.id)) return [];
    const pool = this.d.scheduler.pool(w.endpointId);
    if (!pool || pool.throttled) return [];
    const now = this.d.clock.now();
    const taken: Job[] = [];
    for (let i = 0; i < n; i++) {
      const job = this.d.jobs.nextQueued(w.endpointId, w.lane);
      if (!job) break;
      const patch = { status: "IN_PROGRESS" as const, startedAt: now, workerId: w.id, attempt: job.attempt + 1, timeoutAt: now + job.executionTimeoutMs, output: undefined, error: undefined };
      taken.push(this.d.transitions.move(job, patch, `taken by worker ${w.id}`));
      this.workers.hold(w, job.id);
    }
    return taken;
  }

  private heldJob(endpointId: string, workerId: string, jobId: string): { job: Job; worker: ExternalWorker } {
    this.requireExternal(endpointId);
    const worker = this.touch(endpointId, workerId, "other");
    const job = this.d.jobs.get(jobId);
    if (!job || job.endpointId !== endpointId) throw new EmulatorError("JOB_NOT_FOUND", `job "${jobId}" not found on endpoint "${endpointId}"`);
    if (job.status !== "IN_PROGRESS") {
      throw new EmulatorError("CONFLICT", `job ${jobId} is ${job.status}; a worker's result is accepted only while the job is IN_PROGRESS, and it was left unchanged`);
    }
    if (job.workerId !== workerId) throw new EmulatorError("CONFLICT", `job ${jobId} is held by worker ${job.workerId}, not ${workerId}; it was left unchanged`);
    return { job, worker };
  }

  /** The job, if `workerId` ended it itself (its result arrived). */
  private finishedBy(endpointId: string, workerId: string, jobId: string): Job | undefined {
    const job = this.d.jobs.get(jobId);
    return job && job.endpointId === endpointId && job.workerId === workerId && (job.status === "COMPLETED" || job.status === "FAILED") ? job : undefined;
  }

  /**
   * Whether job `id` is no longer `workerId`'s to run: gone, re-queued, on another worker, or
   * ended by minipod. A job the worker ended itself is not (its heartbeat may still list it).
   */
  private notTheWorkers(id: string, workerId: string): boolean {
    const job = this.d.jobs.get(id);
    if (!job || job.workerId !== workerId) return true;
    return job.status === "CANCELLED" || job.status === "TIMED_OUT";
  }

  private releaseWorkerPolls(w: ExternalWorker): void {
    // A stopped or lost worker takes nothing more: its queue waits for another to call, for a while.
    this.waits.awaitWorker(w.endpointId);
    this.d.clock.activity.changed();
    this.stopChannel.release(w);
    // Its held job-take, if any, ends empty: a stopped worker takes nothing.
    this.takes.release(w.endpointId, (req) => req.worker === w);
  }

  /** Jobs the worker says it no longer has while minipod counted them on it (`job_in_progress=0`). */
  private dropHeldJobs(w: ExternalWorker): void {
    const cause = `worker ${w.id} asked for work holding no job (job_in_progress=0): it no longer has the job`;
    this.requeue(w, [...w.jobs], cause);
  }

  private lost(w: ExternalWorker, jobIds: string[]): void {
    this.waits.awaitWorker(w.endpointId);
    this.d.clock.activity.changed();
    this.stopChannel.forget(w);
    this.d.log.info(`worker ${w.id} of endpoint ${w.endpointId} is lost (${w.reason ?? "silent"})${jobIds.length ? `; its job(s) ${jobIds.join(", ")} go back to the queue` : ""}`);
    this.requeue(w, jobIds, `worker ${w.id} lost: ${w.reason ?? "silent"}`);
  }

  private requeue(w: ExternalWorker, jobIds: string[], cause: string): void {
    const now = this.d.clock.now();
    for (const id of jobIds) {
      this.workers.release(id);
      const job = this.d.jobs.get(id);
      if (job && job.status === "IN_PROGRESS" && job.workerId === w.id && job.endpointId === w.endpointId) requeueLostJob(this.d, job, cause, now);
    }
    if (jobIds.length > 0) this.d.scheduler.pump(w.endpointId);
  }

  /**
   * `requireExternal` for the polls: the library asks again at once after any answer but 204, so
   * a refusal is answered after WORKER_ERROR_DELAY_MS rather than thousands of times a second.
   */
  private async requireExternalSlowly(endpointId: string, signal: Leaving | undefined): Promise<void> {
    try {
      this.requireExternal(endpointId);
    } catch (e) {
      if (!this.closing) await this.refusals.wait("refusal", undefined, WORKER_ERROR_DELAY_MS, signal);
      throw e;
    }
  }

  private requireExternal(endpointId: string): void {
    const spec = this.d.endpoints.spec(endpointId, "QUEUE");
    if (!spec) throw endpointNotFound(endpointId, this.d.endpoints.specs("QUEUE").map((s) => s.id));
    if (spec.handler !== EXTERNAL_HANDLER) {
      throw new EmulatorError(
        "BAD_REQUEST",
        `endpoint "${endpointId}" runs its jobs on simulated workers (handler ${typeof spec.handler === "string" ? spec.handler : spec.handler.type}); give it "handler": "external" to serve worker processes`,
      );
    }
  }
}
