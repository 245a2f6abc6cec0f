/**
 * Worker processes that fetch jobs over HTTP (endpoints whose handler is "external"), as minipod
 * knows them: which jobs each holds, when it was last heard from, and whether it is lost.
 *
 * A worker exists from its first request. It is alive while it calls: every request (heartbeat,
 * job-take, job-stop, a result) counts, and so does a poll held open. Worker processes live in
 * wall time, so silence is measured on the wall clock whatever the virtual clock does: a worker
 * silent for `lostAfterMs` is lost, and the owner is told (its jobs go back to the queue). A lost
 * or stopped worker stays listed for a while, then is forgotten; one that calls again is back.
 */
import type { Activity, Release } from "./activity.js";
import type { WallTime } from "./wall.js";
import { WORKER_FORGET_AFTER_MS, WORKER_RECORDS_MAX } from "./limits.js";
import { EmulatorError } from "./errors.js";
import type { Lane } from "./job.js";

export const EXTERNAL_HANDLER = "external";

/** The worker side's settings, in wall ms (config `externalWorkers`). */
export interface ExternalWorkerSettings {
  /** The heartbeat period workers are given (`RUNPOD_PING_INTERVAL`). */
  pingIntervalMs: number;
  /** Silence after which a worker is lost. */
  lostAfterMs: number;
  /** Longest hold of an empty job-take or job-stop poll. */
  pollHoldMs: number;
}

export const EXTERNAL_WORKER_STATES = ["idle", "running", "unhealthy", "stopped", "lost"] as const;
export type ExternalWorkerState = (typeof EXTERNAL_WORKER_STATES)[number];

/** One worker process: what worker listings and the dashboard show. Times are virtual epoch ms. */
export interface ExternalWorkerView {
  id: string;
  endpointId: string;
  state: ExternalWorkerState;
  /** Jobs IN_PROGRESS on it, in the order it took them. */
  jobIds: string[];
  /**
   * Jobs minipod ended while it ran them (cancelled, timed out, expired) that it has not yet shown
   * it let go of: their stop is sent again on its stop channel until it does.
   */
  stoppingJobIds?: string[];
  /** The job ids its last heartbeat listed (the service's library sends them); absent before one did. */
  reportedJobIds?: string[];
  /** Its requests held open now (job-take and job-stop polls). */
  openPolls: number;
  /** When it first called. */
  startedAt: number;
  /** When it last called (any request). */
  lastSeenAt: number;
  /** When it last sent a heartbeat. */
  lastHeartbeatAt?: number;
  /** The worker library's version, as its heartbeat gives it. */
  runtimeVersion?: string;
  /** Why it is unhealthy, stopped or lost. */
  reason?: string;
}

/** A worker as the registry keeps it. */
export interface ExternalWorker {
  readonly id: string;
  readonly endpointId: string;
  /** Which of the endpoint's queues it takes from (its job-take's `pool`): `/run` traffic or batch requests. */
  lane: Lane;
  readonly jobs: Set<string>;
  /** Jobs ended by minipod while it ran them, until it shows it let go of them (see `stopping`). */
  readonly stopping: Set<string>;
  /**
   * Jobs it may hold at once, as its last job-take told: those it held then and the batch it
   * asked for (a worker running several jobs at once asks for its free places); 1 before it asked.
   */
  places: number;
  startedAt: number;
  lastSeenAt: number;
  lastHeartbeatAt: number | undefined;
  runtimeVersion: string | undefined;
  reportedJobIds: string[] | undefined;
  /** Wall ms of its last request, or of the end of its last held poll. */
  lastWall: number;
  openPolls: number;
  status: "live" | "unhealthy" | "stopped" | "lost";
  /** Wall ms its process exited (its launcher said so); see `touch`. */
  exitedWall?: number | undefined;
  reason: string | undefined;
  timer: (() => void) | undefined;
}

/** What brought a worker's request: a job-take revives a stopped worker, a heartbeat an unhealthy one. */
export type Contact = "take" | "heartbeat" | "other";

/** How long after its process exited a worker's requests are taken for the dead process's, still on their way. */
export const EXITED_GRACE_MS = 1000;

export class ExternalWorkers {
  private readonly byEndpoint = new Map<string, Map<string, ExternalWorker>>();
  private readonly holders = new Map<string, ExternalWorker>();
  /** A job on a worker process runs on real time: the clock does not skip past it (see Activity). */
  private readonly working = new Map<string, Release>();

  constructor(
    private readonly wall: WallTime,
    readonly settings: ExternalWorkerSettings,
    /** A worker went silent: `jobIds` were on it (and no longer are). */
    private readonly onLost: (worker: ExternalWorker, jobIds: string[]) => void,
    private readonly activity?: Activity,
  ) {}

  /** Notes a request of the worker (made on first contact); a lost worker that calls is back. */
  touch(endpointId: string, workerId: string, now: number, contact: Contact): ExternalWorker {
    let m = this.byEndpoint.get(endpointId);
    if (!m) this.byEndpoint.set(endpointId, (m = new Map()));
    let w = m.get(workerId);
    if (!w) {
      if (m.size >= WORKER_RECORDS_MAX) this.makeRoom(m, endpointId);
      w = {
        id: workerId,
        endpointId,
        lane: "standard",
        jobs: new Set(),
        stopping: new Set(),
        places: 1,
        startedAt: now,
        lastSeenAt: now,
        lastHeartbeatAt: undefined,
        runtimeVersion: undefined,
        reportedJobIds: undefined,
        lastWall: 0,
        openPolls: 0,
        status: "live",
        reason: undefined,
        timer: undefined,
      };
      m.set(workerId, w);
    }
    w.lastSeenAt = now;
    w.lastWall = this.wall.now();
    // After its process exited, only a request for work made past the grace brings it back (a
    // restarted process): the library's heartbeat runs in a process of its own that can outlive
    // the main one, and requests of the dead process may still be on their way.
    const stale = w.exitedWall !== undefined && (contact !== "take" || w.lastWall - w.exitedWall < EXITED_GRACE_MS);
    const back = (w.status === "lost" && !stale) || (w.status === "stopped" && contact === "take") || (w.status === "unhealthy" && contact !== "other");
    if (back) {
      w.exitedWall = undefined;
      if (w.status === "lost") w.startedAt = now;
      w.status = "live";
      w.reason = undefined;
    }
    if (!w.timer) this.arm(w, this.settings.lostAfterMs);
    return w;
  }

  /** Forgets the longest-silent lost or stopped worker of a full endpoint, or refuses a new one. */
  private makeRoom(m: Map<string, ExternalWorker>, endpointId: string): void {
    let oldest: ExternalWorker | undefined;
    for (const w of m.values()) {
      if ((w.status === "lost" || w.status === "stopped") && w.jobs.size === 0 && (!oldest || w.lastWall < oldest.lastWall)) oldest = w;
    }
    if (!oldest) {
      throw new EmulatorError(
        "RATE_LIMITED",
        `endpoint "${endpointId}" already has ${WORKER_RECORDS_MAX} live workers, the most minipod keeps; a worker that stops calling is lost after ${formatSeconds(this.settings.lostAfterMs)} and then makes room`,
        { retryAfter: Math.ceil(this.settings.lostAfterMs / 1000) },
      );
    }
    oldest.timer?.();
    m.delete(oldest.id);
  }

  /** A poll of the worker is held open (it is alive meanwhile) ... */
  pollStarted(w: ExternalWorker): void {
    w.openPolls++;
  }

  /** ... and answered. */
  pollEnded(w: ExternalWorker): void {
    w.openPolls = Math.max(0, w.openPolls - 1);
    w.lastWall = this.wall.now();
  }

  heartbeat(w: ExternalWorker, now: number, reported: string[] | undefined, version: string | undefined): void {
    w.lastHeartbeatAt = now;
    if (reported) {
      w.reportedJobIds = reported;
      // A job it no longer lists is one it has let go of.
      for (const id of w.stopping) if (!reported.includes(id)) w.stopping.delete(id);
    }
    if (version) w.runtimeVersion = version;
  }

  /** The worker reported a failed start-up check; it counts as unhealthy until it is lost or calls normally. */
  markUnhealthy(w: ExternalWorker, reason: string): void {
    w.status = "unhealthy";
    w.reason = reason;
  }

  /** The worker asked to be stopped (`stopPod`): it takes no more jobs and leaves the idle count. */
  markStopped(w: ExternalWorker, reason: string): void {
    w.status = "stopped";
    w.reason = reason;
  }

  hold(w: ExternalWorker, jobId: string): void {
    w.jobs.add(jobId);
    this.holders.set(jobId, w);
    if (this.activity && !this.working.has(jobId)) this.working.set(jobId, this.activity.working());
  }

  /** The job is no longer on its worker; answers the worker that held it. */
  release(jobId: string): ExternalWorker | undefined {
    const w = this.holders.get(jobId);
    if (!w) return undefined;
    this.holders.delete(jobId);
    w.jobs.delete(jobId);
    this.stopWorking(jobId);
    return w;
  }

  private stopWorking(jobId: string): void {
    this.working.get(jobId)?.();
    this.working.delete(jobId);
  }

  /** Whether a live worker passes `test`. */
  anyLive(test: (w: ExternalWorker) => boolean): boolean {
    for (const m of this.byEndpoint.values()) for (const w of m.values()) if (w.status === "live" && test(w)) return true;
    return false;
  }

  holder(jobId: string): ExternalWorker | undefined {
    return this.holders.get(jobId);
  }

  get(endpointId: string, workerId: string): ExternalWorker | undefined {
    return this.byEndpoint.get(endpointId)?.get(workerId);
  }

  /** The worker asks for `n` more jobs (a job-take): it may hold those it holds and `n` at once. */
  asked(w: ExternalWorker, n: number): void {
    w.places = w.jobs.size + w.stopping.size + n;
  }

  /** Jobs a live worker may take now beside those it holds: its places (see `places`) not taken. */
  freePlaces(w: ExternalWorker): number {
    return w.status === "live" ? Math.max(0, w.places - w.jobs.size - w.stopping.size) : 0;
  }

  /** Workers of an endpoint as /health counts them: lost and stopped ones are gone. */
  counts(endpointId: string): { idle: number; running: number; unhealthy: number } {
    const c = { idle: 0, running: 0, unhealthy: 0 };
    for (const w of this.byEndpoint.get(endpointId)?.values() ?? []) {
      if (w.status === "unhealthy") c.unhealthy++;
      else if (w.status === "lost") continue;
      else if (w.jobs.size > 0 || w.stopping.size > 0) c.running++;
      else if (w.status === "live") c.idle++;
    }
    return c;
  }

  /** The workers of one endpoint, or of all, oldest first. */
  list(endpointId?: string): ExternalWorkerView[] {
    return this.records(endpointId).map(view);
  }

  records(endpointId?: string): ExternalWorker[] {
    const maps = endpointId === undefined ? [...this.byEndpoint.values()] : [this.byEndpoint.get(endpointId) ?? new Map<string, ExternalWorker>()];
    return maps.flatMap((m) => [...m.values()]);
  }

  /** Forgets the workers of an endpoint (or all): their timers stop. */
  forget(endpointId?: string): void {
    const ids = endpointId === undefined ? [...this.byEndpoint.keys()] : [endpointId];
    for (const id of ids) {
      for (const w of this.byEndpoint.get(id)?.values() ?? []) {
        w.timer?.();
        for (const jobId of w.jobs) {
          this.holders.delete(jobId);
          this.stopWorking(jobId);
        }
      }
      this.byEndpoint.delete(id);
    }
  }

  /** One wall timer per worker, re-armed only when it fires: a busy worker costs no timer per request. */
  private arm(w: ExternalWorker, ms: number): void {
    w.timer?.();
    w.timer = this.wall.after(ms, () => {
      w.timer = undefined;
      this.check(w);
    });
  }

  private check(w: ExternalWorker): void {
    if (this.byEndpoint.get(w.endpointId)?.get(w.id) !== w) return;
    const silent = this.wall.now() - w.lastWall;
    if (w.status === "lost" || (w.status === "stopped" && w.jobs.size === 0)) {
      if (silent >= WORKER_FORGET_AFTER_MS) this.byEndpoint.get(w.endpointId)?.delete(w.id);
      else this.arm(w, WORKER_FORGET_AFTER_MS - silent);
      return;
    }
    const { lostAfterMs } = this.settings;
    if (w.openPolls > 0 || silent < lostAfterMs) return this.arm(w, w.openPolls > 0 ? lostAfterMs : lostAfterMs - silent);
    this.lose(w, `no heartbeat or request for ${formatSeconds(lostAfterMs)}`);
  }

  /**
   * The worker is gone now, silent or known dead (its process exited): it leaves the pool and the
   * counts, and the jobs it held are handed back. A stopped worker keeps its state and reason.
   */
  lose(w: ExternalWorker, reason: string): void {
    const jobIds = [...w.jobs];
    for (const jobId of jobIds) this.release(jobId);
    w.stopping.clear();
    if (w.status !== "stopped") {
      w.status = "lost";
      w.reason = reason;
    }
    w.openPolls = 0;
    this.arm(w, WORKER_FORGET_AFTER_MS);
    this.onLost(w, jobIds);
  }
}

const formatSeconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

function view(w: ExternalWorker): ExternalWorkerView {
  const state: ExternalWorkerState = w.status === "live" ? (w.jobs.size > 0 || w.stopping.size > 0 ? "running" : "idle") : w.status;
  return {
    id: w.id,
    endpointId: w.endpointId,
    state,
    jobIds: [...w.jobs],
    ...(w.stopping.size > 0 ? { stoppingJobIds: [...w.stopping] } : {}),
    ...(w.reportedJobIds ? { reportedJobIds: [...w.reportedJobIds] } : {}),
    openPolls: w.openPolls,
    startedAt: w.startedAt,
    lastSeenAt: w.lastSeenAt,
    ...(w.lastHeartbeatAt !== undefined ? { lastHeartbeatAt: w.lastHeartbeatAt } : {}),
    ...(w.runtimeVersion ? { runtimeVersion: w.runtimeVersion } : {}),
    ...(w.reason ? { reason: w.reason } : {}),
  };
}
