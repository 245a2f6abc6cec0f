import type { Release } from "./activity.js";
import type { TimerHandle, VirtualClock } from "./clock.js";
import type { ExternalWorkers } from "./external-workers.js";
import type { JobStore } from "./ports.js";
import type { Scheduler } from "./scheduler.js";
import { WORKER_START_WAIT_MS } from "./limits.js";

/**
 * What waits on worker processes rather than on timers, as the clock's rule counts it (see
 * Activity): a worker process starting (minipod started it and it has not called yet), and a job
 * queued for worker processes. A job queued where a worker is live is taken soon; with none live,
 * a worker is given WORKER_START_WAIT_MS (or `lostAfterMs`, when longer) of wall time, from the
 * job's coming or the last worker's going, to call: time to boot, or to be restarted. Without
 * this, the auto clock would skip to a queued job's ttl while its worker boots, or between a
 * worker's result and its next job-take.
 *
 * A process started with a cold start (`expect(..., coldStartMs)`, minipod's image workers) starts
 * on the virtual clock instead: it is given no job until `coldStartMs` of virtual time have passed
 * since it was started; meanwhile its job waits on virtual time, and its real start is not work
 * that keeps time from skipping. When its cold start ends before the process has called, time is
 * held there (`clock.hold`) until it calls: the auto clock, skipping to the cold start's end, and
 * a manual `advance` stand at that time while the process starts (for up to the clock's settle
 * time), so the job starts exactly `coldStartMs` after it was queued, however long the process
 * took. On the real clock the job starts at the later of the two.
 */
export class WorkerWaits {
  /** Worker processes started and not heard from yet, by `endpointId/workerId`. */
  private readonly expected = new Map<string, Release>();
  /** Endpoints whose queue waits for a worker process to call: since when (wall ms). */
  private readonly awaited = new Map<string, number>();
  private readonly waitMs: number;
  /** Worker processes in their cold start, or past it and not heard from yet, by `endpointId/workerId`. */
  private readonly cold = new Map<string, ColdStart>();

  constructor(
    private readonly d: {
      clock: VirtualClock;
      jobs: JobStore;
      scheduler: Scheduler;
      workers: ExternalWorkers;
      lostAfterMs: number;
      /** A worker of the endpoint ended its cold start: its held job-take may get a job now. */
      onReady: (endpointId: string) => void;
    },
  ) {
    this.waitMs = Math.max(WORKER_START_WAIT_MS, d.lostAfterMs);
    d.clock.activity.addSource(() => this.queued());
  }

  /**
   * A worker process was started: until it first calls (`heard`) or `cancel` is called, it is
   * starting; with `coldStartMs`, until that much virtual time has passed too (see above). Returns `cancel`.
   */
  expect(endpointId: string, workerId: string, coldStartMs = 0): Release {
    const key = `${endpointId}/${workerId}`;
    if (coldStartMs > 0) return this.coldStart(key, endpointId, coldStartMs);
    this.expected.get(key)?.();
    const release = this.d.clock.activity.working();
    const cancel = () => {
      release();
      if (this.expected.get(key) === cancel) this.expected.delete(key);
    };
    this.expected.set(key, cancel);
    return cancel;
  }

  private coldStart(key: string, endpointId: string, coldStartMs: number): Release {
    const { clock } = this.d;
    this.cold.get(key)?.cancel();
    const state: ColdStart = { heard: false, over: false, waiting: clock.activity.waiting(), cancel: () => {} };
    const timer: TimerHandle = clock.after(
      coldStartMs,
      () => {
        state.over = true;
        state.waiting();
        // Time stands here (while the clock skips or advances) until the process calls.
        if (!state.heard) state.hold = clock.hold();
        else this.cold.delete(key);
        this.d.onReady(endpointId);
      },
      "worker cold start",
    );
    state.cancel = () => {
      clock.cancel(timer);
      state.waiting();
      state.hold?.();
      if (this.cold.get(key) === state) this.cold.delete(key);
    };
    this.cold.set(key, state);
    return state.cancel;
  }

  /** Whether a worker process of the endpoint is in its cold start. */
  private coldStarting(endpointId: string): boolean {
    if (this.cold.size === 0) return false;
    for (const [key, state] of this.cold) if (!state.over && key.startsWith(`${endpointId}/`)) return true;
    return false;
  }

  /** Whether the worker may be given jobs: not while in its cold start. */
  ready(endpointId: string, workerId: string): boolean {
    return this.cold.size === 0 || this.cold.get(`${endpointId}/${workerId}`)?.over !== false;
  }

  /** Worker processes of the endpoint started that have not called yet, or are in their cold start. */
  starting(endpointId: string): number {
    let n = 0;
    for (const key of this.expected.keys()) if (key.startsWith(`${endpointId}/`)) n++;
    for (const [key, state] of this.cold) if (key.startsWith(`${endpointId}/`) && !(state.over && state.heard)) n++;
    return n;
  }

  /** A worker called. */
  heard(endpointId: string, workerId: string): void {
    if (this.expected.size > 0) this.expected.get(`${endpointId}/${workerId}`)?.();
    if (this.cold.size === 0) return;
    const key = `${endpointId}/${workerId}`;
    const state = this.cold.get(key);
    if (!state || state.heard) return;
    state.heard = true;
    if (!state.over) return;
    state.hold?.();
    this.cold.delete(key);
  }

  /** Jobs came, or a worker went: with no worker of the endpoint live, its queue waits for one. */
  awaitWorker(endpointId: string): void {
    if (this.d.workers.anyLive((w) => w.endpointId === endpointId)) return;
    this.awaited.set(endpointId, this.d.clock.wall.now());
    // When the wait ends, the clock may skip again.
    this.d.clock.wall.after(this.waitMs, () => this.d.clock.activity.changed());
  }

  /** Whether a job waits in the queue for a worker process. */
  private queued(): boolean {
    const { jobs, scheduler, workers } = this.d;
    if (workers.anyLive((w) => jobs.hasQueued(w.endpointId, w.lane) && scheduler.pool(w.endpointId)?.throttled === false && this.ready(w.endpointId, w.id))) return true;
    const now = this.d.clock.wall.now();
    for (const [endpointId, since] of this.awaited) {
      if (now - since >= this.waitMs || !scheduler.pool(endpointId)) this.awaited.delete(endpointId);
      // A worker in its cold start: the queue waits on virtual time, not on it.
      else if (this.coldStarting(endpointId)) continue;
      else if (jobs.hasQueued(endpointId, "standard") || jobs.hasQueued(endpointId, "batch")) return true;
    }
    return false;
  }
}

interface ColdStart {
  /** The process has called. */
  heard: boolean;
  /** Its cold start's time has passed. */
  over: boolean;
  /** Ends its job's wait on virtual time. */
  waiting: Release;
  /** Time held at the cold start's end until the process calls. */
  hold?: () => void;
  cancel: Release;
}
