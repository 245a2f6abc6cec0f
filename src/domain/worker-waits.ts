import type { Release } from "./activity.js";
import type { VirtualClock } from "./clock.js";
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
 */
export class WorkerWaits {
  /** Worker processes started and not heard from yet, by `endpointId/workerId`. */
  private readonly expected = new Map<string, Release>();
  /** Endpoints whose queue waits for a worker process to call: since when (wall ms). */
  private readonly awaited = new Map<string, number>();
  private readonly waitMs: number;

  constructor(private readonly d: { clock: VirtualClock; jobs: JobStore; scheduler: Scheduler; workers: ExternalWorkers; lostAfterMs: number }) {
    this.waitMs = Math.max(WORKER_START_WAIT_MS, d.lostAfterMs);
    d.clock.activity.addSource(() => this.queued());
  }

  /** A worker process was started: until it first calls (`heard`) or `cancel` is called, it is starting. Returns `cancel`. */
  expect(endpointId: string, workerId: string): Release {
    const key = `${endpointId}/${workerId}`;
    this.expected.get(key)?.();
    const release = this.d.clock.activity.working();
    const cancel = () => {
      release();
      if (this.expected.get(key) === cancel) this.expected.delete(key);
    };
    this.expected.set(key, cancel);
    return cancel;
  }

  /** Worker processes of the endpoint started that have not called yet. */
  starting(endpointId: string): number {
    let n = 0;
    for (const key of this.expected.keys()) if (key.startsWith(`${endpointId}/`)) n++;
    return n;
  }

  /** A worker called. */
  heard(endpointId: string, workerId: string): void {
    if (this.expected.size > 0) this.expected.get(`${endpointId}/${workerId}`)?.();
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
    if (workers.anyLive((w) => jobs.hasQueued(w.endpointId, w.lane) && scheduler.pool(w.endpointId)?.throttled === false)) return true;
    const now = this.d.clock.wall.now();
    for (const [endpointId, since] of this.awaited) {
      if (now - since >= this.waitMs || !scheduler.pool(endpointId)) this.awaited.delete(endpointId);
      else if (jobs.hasQueued(endpointId, "standard") || jobs.hasQueued(endpointId, "batch")) return true;
    }
    return false;
  }
}
