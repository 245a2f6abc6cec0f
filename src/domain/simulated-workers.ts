import type { TimerHandle, VirtualClock } from "./clock.js";
import type { EndpointSpec } from "./endpoint.js";
import { EXTERNAL_HANDLER } from "./external-workers.js";
import type { Job, Lane } from "./job.js";
import type { JobStore } from "./ports.js";

export type WorkerState = "initializing" | "idle" | "running";

export interface SimWorker {
  id: string;
  state: WorkerState;
  jobId: string | undefined;
  /** Virtual time of the last state change. */
  since: number;
  /** Virtual time the worker was created (its cold start began). */
  createdAt: number;
  /** Its cold start's end, or its idle timer (kept armed while it runs a job: see `armIdle`). */
  timer: TimerHandle | undefined;
  /** The cause a job's timeline records when it starts here, made once rather than per job. */
  startCause: string;
}

/**
 * What happened to a simulated worker, for observers such as usage metering: `started` when it is
 * created (cold start included), `state` on each later state change, `stopped` when it is gone
 * (scaled down, removed, or its endpoint detached). `state` is the worker's state after the event
 * (for `stopped`, the last one it had).
 */
export interface WorkerEvent {
  type: "started" | "state" | "stopped";
  endpointId: string;
  workerId: string;
  state: WorkerState;
  /** Virtual time of the event. */
  at: number;
}

export type WorkerObserver = (event: WorkerEvent) => void;

export interface WorkerCounts {
  initializing: number;
  idle: number;
  running: number;
}

/** What a pool is given besides its settings: its lane of the queue, and what it tells the scheduler. */
export interface PoolLinks {
  /** The queue its workers take jobs from (read only here: starting a job moves it out of the queue). */
  queue: Pick<JobStore, "nextQueued" | "countScalingDemand" | "hasQueued">;
  lane: Lane;
  /** Runs `job` on `worker`, which the pool has marked running for it. */
  start(job: Job, worker: SimWorker, spec: EndpointSpec): void;
  /** A cold start ended: the pool has one more worker to give (the scheduler pumps the endpoint). */
  onReady(): void;
}

/**
 * The simulated workers of one endpoint's lane, and every decision about them, in `dispatch`:
 * `workersMin` kept warm, idle workers given the oldest jobs of the lane, new workers after a cold
 * start for what still waits, idle workers scaled down after `idleTimeout` seconds. The scheduler
 * pumps it, runs the jobs it matches and gives their workers back (`release`); the scheduler's
 * `Transitions` alone write the jobs.
 */
export class WorkerPool {
  private readonly workers = new Map<string, SimWorker>();
  /** Set while the endpoint has no capacity (a `no-workers` fault): no worker starts or stays idle. */
  private blocked = false;

  constructor(
    private spec: EndpointSpec,
    private readonly clock: VirtualClock,
    private readonly newId: () => string,
    private readonly links: PoolLinks,
    private readonly observer?: WorkerObserver,
  ) {}

  /**
   * The pool's decision, each time the scheduler pumps its endpoint: capacity taken away or given
   * back (`blocked`: a `no-workers` fault), the minimum refilled, idle workers given the oldest
   * jobs of its lane (each handed to `start`, its worker running), then new workers for what still
   * waits, up to `workersMax` (one with no cold start takes a job at once). Returns false on an
   * endpoint served by worker processes, which take its jobs themselves.
   */
  dispatch(blocked: boolean): boolean {
    // Nothing to decide on an empty pool with nothing waiting (most endpoints' batch lane, on every /run).
    if (this.workers.size === 0 && this.spec.workersMin === 0 && blocked === this.blocked && !this.links.queue.hasQueued(this.spec.id, this.links.lane)) return !this.external;
    this.setThrottled(blocked);
    if (this.external) return false;
    this.fillMinimum(false);
    this.assign();
    if (this.scaleFor((limit) => this.links.queue.countScalingDemand(this.spec.id, limit, this.links.lane)) > 0) this.assign();
    return true;
  }

  /** A worker's job ended (`idle`: it takes the next one) or the worker died with it (`gone`). */
  release(workerId: string, how: "idle" | "gone"): void {
    const w = this.workers.get(workerId);
    if (!w) return;
    if (how === "idle") this.markIdle(w);
    else this.remove(w);
  }

  private assign(): void {
    for (;;) {
      const worker = this.takeIdle();
      if (!worker) return;
      const job = this.links.queue.nextQueued(this.spec.id, this.links.lane);
      if (!job) return;
      this.markRunning(worker, job.id);
      try {
        this.links.start(job, worker, this.spec);
      } catch (e) {
        // The job could not start (it stays queued): its worker is free again.
        this.markIdle(worker);
        throw e;
      }
    }
  }

  get endpointId(): string {
    return this.spec.id;
  }

  get settings(): EndpointSpec {
    return this.spec;
  }

  counts(): WorkerCounts {
    const c: WorkerCounts = { initializing: 0, idle: 0, running: 0 };
    for (const w of this.workers.values()) c[w.state]++;
    return c;
  }

  /**
   * Running workers whose idle timer is still armed: kept through the job so none is set per job
   * (see `armIdle`), it does nothing when it fires while the worker runs, and a worker idle again
   * before then is looked at when its new idle time ends. The clock's timers, less these, are those
   * that will act (`pendingTimers`).
   */
  keptIdleTimers(): number {
    let n = 0;
    for (const w of this.workers.values()) if (w.state === "running" && w.timer !== undefined) n++;
    return n;
  }

  list(): SimWorker[] {
    return [...this.workers.values()];
  }

  /** The worker idle the longest, if any. */
  private takeIdle(): SimWorker | undefined {
    let best: SimWorker | undefined;
    for (const w of this.workers.values()) if (w.state === "idle" && (!best || w.since < best.since)) best = w;
    return best;
  }

  /** Endpoints served by worker processes over HTTP have no simulated workers. */
  get external(): boolean {
    return this.spec.handler === EXTERNAL_HANDLER;
  }

  /** Workers of the pool, in every state. */
  get workerCount(): number {
    return this.workers.size;
  }

  get throttled(): boolean {
    return this.blocked;
  }

  /**
   * Takes capacity away (true): idle and starting workers go at once, running ones when their job
   * ends, and none starts. Giving it back (false) refills the minimum.
   */
  private setThrottled(blocked: boolean): void {
    if (blocked === this.blocked) return;
    this.blocked = blocked;
    if (blocked) {
      for (const w of this.workers.values()) if (w.state !== "running") this.remove(w);
    } else {
      this.fillMinimum(false);
    }
  }

  /** Starts `workersMin` workers; `warm` ones are ready at once (an endpoint already deployed). */
  fillMinimum(warm: boolean): void {
    if (this.blocked || this.external) return;
    const missing = this.spec.workersMin - this.workers.size;
    for (let i = 0; i < missing; i++) this.add(warm);
  }

  /**
   * Starts workers for the jobs waiting that may trigger scaling (`demand(limit)` counts them up
   * to `limit`), counting workers already starting, up to `workersMax`; returns how many it added.
   */
  private scaleFor(demand: (limit: number) => number): number {
    if (this.blocked || this.external) return 0;
    const room = this.spec.workersMax - this.workers.size;
    if (room <= 0) return 0;
    const starting = this.counts().initializing;
    const wanted = Math.min(demand(room + starting) - starting, room);
    for (let i = 0; i < wanted; i++) this.add(false);
    return Math.max(0, wanted);
  }

  /** Only an idle worker starts a job: its idle timer stays armed (see `armIdle`), no timer is set or cancelled per job. */
  private markRunning(w: SimWorker, jobId: string): void {
    w.state = "running";
    w.jobId = jobId;
    w.since = this.clock.now();
    this.emit("state", w);
  }

  /** The worker is free again; it is scaled down after idleTimeout unless something takes it. */
  private markIdle(w: SimWorker): void {
    if (!this.workers.has(w.id)) return;
    if (this.blocked) return this.remove(w);
    w.state = "idle";
    w.jobId = undefined;
    w.since = this.clock.now();
    this.emit("state", w);
    // A worker back from a job mostly has its idle timer still armed, due no later than this idle
    // time ends: it looks again when it fires. One whose timer fired meanwhile (or after its cold start) gets one.
    if (w.timer === undefined) this.armIdle(w, w.since);
  }

  private remove(w: SimWorker): void {
    this.clock.cancel(w.timer);
    if (this.workers.delete(w.id)) this.emit("stopped", w);
  }

  /** New settings (management update): trims idle workers over the new maximum, fills the minimum. */
  update(spec: EndpointSpec): void {
    this.spec = spec;
    for (const w of this.workers.values()) {
      if (this.workers.size <= spec.workersMax) break;
      if (w.state !== "running") this.remove(w);
    }
    // An idle worker's countdown starts again under the new setting.
    const now = this.clock.now();
    for (const w of this.workers.values()) if (w.state === "idle") this.armIdle(w, now);
    this.fillMinimum(false);
  }

  stopAll(): void {
    for (const w of this.workers.values()) {
      this.clock.cancel(w.timer);
      this.emit("stopped", w);
    }
    this.workers.clear();
  }

  private add(warm: boolean): void {
    const id = this.newId();
    const now = this.clock.now();
    const w: SimWorker = { id, state: "initializing", jobId: undefined, since: now, createdAt: now, timer: undefined, startCause: `started on worker ${id}` };
    this.workers.set(w.id, w);
    if (warm || this.spec.coldStartMs <= 0) w.state = "idle";
    this.emit("started", w);
    if (w.state === "idle") {
      this.armIdle(w, now);
      return;
    }
    w.timer = this.clock.after(
      this.spec.coldStartMs,
      () => {
        w.timer = undefined;
        this.markIdle(w);
        this.links.onReady();
      },
      "worker-cold-start",
    );
  }

  /**
   * Arms the worker's idle timer for `idleTimeout` after `from` (its idle time began, or its
   * settings changed). The timer is not cancelled when the worker takes a job: when it fires, a
   * worker still idle since then is scaled down (above the minimum); one idle again since a later
   * job is looked at again when that idle time ends; one running leaves it to its next idle time.
   * So a worker's scale-down falls when it always did, with no timer set and cancelled per job.
   */
  private armIdle(w: SimWorker, from: number): void {
    this.clock.cancel(w.timer);
    w.timer = this.clock.at(from + this.spec.idleTimeout * 1000, () => this.idleTimerFired(w, from), "worker-idle");
  }

  private idleTimerFired(w: SimWorker, armedFrom: number): void {
    w.timer = undefined;
    if (w.state !== "idle" || !this.workers.has(w.id)) return;
    // Idle again since a later job: its idle time ends later.
    if (w.since > armedFrom) return this.armIdle(w, w.since);
    if (this.workers.size > this.spec.workersMin) this.remove(w);
  }

  private emit(type: WorkerEvent["type"], w: SimWorker): void {
    this.observer?.({ type, endpointId: this.spec.id, workerId: w.id, state: w.state, at: this.clock.now() });
  }
}
