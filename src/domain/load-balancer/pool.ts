import type { TimerHandle, VirtualClock } from "../clock.js";
import type { EndpointSpec } from "../endpoint.js";
import { ENDPOINT_SCALER_VALUE_DEFAULT, LB_AFFINITY_WAIT_MS, LB_NO_WORKER_WAIT_MS, LB_REQUEST_TIMEOUT_MS } from "../limits.js";
import { RecentMap } from "../recent-map.js";
import {
  AFFINITY_GONE,
  AFFINITY_TIMEOUT,
  LbRefusal,
  NO_WORKERS,
  type Affinity,
  type Lease,
  type LbStatus,
  type LbLauncher,
  type LbTarget,
  type LbWorker,
  type LbWorkerKind,
  type LbWorkerState,
} from "./types.js";

interface Waiter {
  affinity: Affinity;
  since: number;
  timer: TimerHandle | undefined;
  /** Ends its wait on virtual time (see Activity). */
  waiting: () => void;
  resolve(lease: Lease): void;
  reject(refusal: LbRefusal): void;
}

/** Ids of scaled-down workers remembered for `strict-resume`. */
const RETIRED_KEPT = 256;

/**
 * The workers of one load-balancing endpoint and the requests waiting for them. A request goes to
 * the ready worker with the fewest requests in flight, up to the endpoint's request count per
 * worker (REQUEST_COUNT); beyond that, or with no ready worker, it waits (2 minutes, then 400).
 * Simulated workers are scaled on the same count: enough for what is in flight and waiting,
 * between workersMin and workersMax, each after its cold start; idle ones leave after idleTimeout.
 * Process workers are a fixed set, in the pool once their health check answers 200, unless a
 * launcher starts and stops them: then they are scaled as simulated ones are.
 */
export class LbPool {
  private readonly workers = new Map<string, LbWorker>();
  private readonly waiters: Waiter[] = [];
  private readonly timers = new Map<string, TimerHandle>();
  private readonly retired = new RecentMap<string, true>(RETIRED_KEPT);
  private served = 0;
  private closed = false;
  /** Process workers started and not registered yet. */
  private launching = 0;
  private launcher: LbLauncher | undefined;

  constructor(
    private spec: EndpointSpec,
    readonly kind: LbWorkerKind,
    private readonly d: { clock: VirtualClock; newWorkerId: () => string },
  ) {}

  get settings(): EndpointSpec {
    return this.spec;
  }

  /** Requests one worker takes at once: the endpoint's REQUEST_COUNT. */
  get capacity(): number {
    const value = this.spec.extra.scalerValue;
    return typeof value === "number" && value >= 1 ? Math.round(value) : ENDPOINT_SCALER_VALUE_DEFAULT;
  }

  list(): LbWorker[] {
    return [...this.workers.values()];
  }

  get(workerId: string): LbWorker | undefined {
    return this.workers.get(workerId);
  }

  /** Worker processes are started and stopped by `launcher` from now on, as the pool scales. */
  setLauncher(launcher: LbLauncher | undefined): void {
    this.launcher = launcher;
    this.scale();
  }

  /** Starts the minimum of simulated workers (`warm`: ready at once, as after a restart). */
  start(warm: boolean): void {
    if (this.kind !== "simulated") return this.scale();
    while (this.workers.size < this.spec.workersMin) this.startWorker(undefined, warm);
  }

  update(spec: EndpointSpec): void {
    this.spec = spec;
    this.scale();
    this.dispatch();
  }

  /** Waits for a worker the affinity allows; rejects with the service's refusal when none comes. */
  acquire(affinity: Affinity): Promise<Lease> {
    const now = this.d.clock.now();
    if (affinity.mode === "strict" || affinity.mode === "strict-resume") {
      if (!this.workers.has(affinity.workerId)) {
        const resumable = affinity.mode === "strict-resume" && this.kind === "simulated" && this.retired.get(affinity.workerId) && this.workers.size < this.spec.workersMax;
        if (!resumable) return Promise.reject(new LbRefusal(404, AFFINITY_GONE));
        this.retired.delete(affinity.workerId);
        this.startWorker(affinity.workerId, false);
      }
    }
    const free = this.pick(affinity);
    if (free) return Promise.resolve(this.lease(free, now));
    return new Promise<Lease>((resolve, reject) => {
      // A request waiting for a worker (a cold start, a worker with room) waits on virtual time.
      const waiter: Waiter = { affinity, since: now, timer: undefined, waiting: this.d.clock.activity.waiting(), resolve, reject };
      const strict = affinity.mode === "strict" || affinity.mode === "strict-resume";
      waiter.timer = this.d.clock.after(strict ? LB_AFFINITY_WAIT_MS : LB_NO_WORKER_WAIT_MS, () => {
        this.drop(waiter);
        reject(new LbRefusal(400, strict ? AFFINITY_TIMEOUT : NO_WORKERS));
        this.scale();
      }, "load-balancer wait");
      this.waiters.push(waiter);
      this.scale();
    });
  }

  /** A process worker joins (initializing until its health check says ready). */
  register(workerId: string, target: LbTarget): LbWorker {
    const existing = this.workers.get(workerId);
    if (existing) {
      existing.target = target;
      return existing;
    }
    if (this.launching > 0) this.launching--;
    const w = this.newWorker(workerId, "initializing");
    w.target = target;
    this.d.clock.activity.changed();
    return w;
  }

  /**
   * Whether a worker process is on its way (launched and not registered, or registered and still
   * initializing): that is real work, which the clock does not skip past (see Activity).
   */
  starting(): boolean {
    if (this.kind !== "process" || this.closed) return false;
    if (this.launching > 0) return true;
    for (const w of this.workers.values()) if (w.state === "initializing") return true;
    return false;
  }

  /** What a health check said of a worker; a change to ready hands it waiting requests. */
  health(workerId: string, state: LbWorkerState): void {
    const w = this.workers.get(workerId);
    if (!w) return;
    // Its cold start counts from its first 204, though it was "initializing" since it registered.
    if (state === "initializing") w.initializingAt ??= this.d.clock.now();
    if (w.state === state) return;
    this.setState(w, state);
    this.d.clock.activity.changed();
    if (state !== "ready") return;
    this.dispatch();
    if (w.inFlight === 0) this.idle(w);
  }

  /** A worker is gone: requests pinned to it strictly are answered 404 at once. */
  remove(workerId: string): void {
    const w = this.workers.get(workerId);
    if (!w) return;
    this.workers.delete(workerId);
    this.d.clock.cancel(this.timers.get(workerId));
    this.timers.delete(workerId);
    this.d.clock.activity.changed();
    for (const waiter of [...this.waiters]) {
      if (waiter.affinity.mode !== "none" && waiter.affinity.mode !== "soft" && waiter.affinity.workerId === workerId) {
        this.drop(waiter);
        waiter.reject(new LbRefusal(404, AFFINITY_GONE));
      }
    }
    this.scale();
  }

  status(): LbStatus {
    const workers = { initializing: 0, ready: 0, unhealthy: 0, idle: 0, running: 0 };
    let inFlight = 0;
    for (const w of this.workers.values()) {
      workers[w.state]++;
      if (w.state === "ready") workers[w.inFlight > 0 ? "running" : "idle"]++;
      inFlight += w.inFlight;
    }
    return { workers, requests: { inFlight, waiting: this.waiters.length, served: this.served } };
  }

  /** Stops serving: waiting requests are refused, simulated workers gone. */
  close(reason: LbRefusal): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      this.d.clock.cancel(waiter.timer);
      waiter.waiting();
      waiter.reject(reason);
    }
    for (const t of this.timers.values()) this.d.clock.cancel(t);
    this.timers.clear();
    this.workers.clear();
  }

  /** A ready worker with room that the affinity allows, or undefined. */
  private pick(affinity: Affinity): LbWorker | undefined {
    const cap = this.capacity;
    if (affinity.mode !== "none") {
      const w = this.workers.get(affinity.workerId);
      if (w && w.state === "ready" && w.inFlight < cap) return w;
      if (affinity.mode !== "soft") return undefined;
    }
    let best: LbWorker | undefined;
    for (const w of this.workers.values()) {
      if (w.state !== "ready" || w.inFlight >= cap) continue;
      if (!best || w.inFlight < best.inFlight) best = w;
    }
    return best;
  }

  private lease(w: LbWorker, requestedAt: number): Lease {
    w.inFlight++;
    this.d.clock.cancel(this.timers.get(w.id));
    this.timers.delete(w.id);
    // A request at a worker process runs on real time; a simulated worker's answers are minipod's own.
    const working = w.kind === "process" ? this.d.clock.activity.working() : undefined;
    let timer: TimerHandle | undefined;
    let released = false;
    return {
      worker: w,
      waitedMs: this.d.clock.now() - requestedAt,
      onTimeout: (fn) => {
        if (!released) timer = this.d.clock.after(LB_REQUEST_TIMEOUT_MS, fn, "load-balancer request timeout");
      },
      release: () => {
        if (released) return;
        released = true;
        this.d.clock.cancel(timer);
        working?.();
        w.inFlight--;
        w.served++;
        this.served++;
        if (this.closed) return;
        this.dispatch();
        if (w.inFlight === 0) this.idle(w);
      },
    };
  }

  /** Hands waiting requests, oldest first, to workers that have room. */
  private dispatch(): void {
    for (let i = 0; i < this.waiters.length; ) {
      const waiter = this.waiters[i]!;
      const w = this.pick(waiter.affinity);
      if (!w) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      this.d.clock.cancel(waiter.timer);
      waiter.waiting();
      waiter.resolve(this.lease(w, waiter.since));
    }
    this.scale();
  }

  /** Simulated workers for what is in flight and waiting, between the endpoint's minimum and maximum. */
  private scale(): void {
    if ((this.kind !== "simulated" && !this.launcher) || this.closed) return;
    let demand = this.waiters.length;
    let live = this.launching;
    for (const w of this.workers.values()) {
      demand += w.inFlight;
      if (w.state !== "unhealthy") live++;
    }
    const wanted = Math.min(this.spec.workersMax, Math.max(this.spec.workersMin, Math.ceil(demand / this.capacity)));
    let readyNow = false;
    if (this.launcher) {
      for (; live < wanted; live++) {
        this.launching++;
        this.launcher.start();
      }
      return;
    }
    for (; live < wanted; live++) readyNow = this.startWorker(undefined, false) || readyNow;
    // A worker without a cold start takes what waits at once.
    if (readyNow && this.waiters.length > 0) this.dispatch();
  }

  /** Starts a simulated worker; true when it is ready at once (no cold start). */
  private startWorker(id: string | undefined, warm: boolean): boolean {
    const cold = warm ? 0 : this.spec.coldStartMs;
    const w = this.newWorker(id ?? this.d.newWorkerId(), cold > 0 ? "initializing" : "ready");
    if (cold === 0) {
      w.readyAt = w.createdAt;
      this.idle(w);
      return true;
    }
    this.timers.set(
      w.id,
      this.d.clock.after(cold, () => {
        this.timers.delete(w.id);
        this.setState(w, "ready");
        this.dispatch();
        if (w.inFlight === 0) this.idle(w);
      }, "load-balancer cold start"),
    );
    return false;
  }

  /** An idle simulated worker above the minimum leaves after idleTimeout (and may be resumed by id). */
  private idle(w: LbWorker): void {
    if (this.kind !== "simulated" && !this.launcher) return;
    this.d.clock.cancel(this.timers.get(w.id));
    this.timers.set(
      w.id,
      this.d.clock.after(this.spec.idleTimeout * 1000, () => {
        this.timers.delete(w.id);
        if (w.inFlight > 0 || this.workers.size <= this.spec.workersMin || this.waiters.length > 0) return;
        if (this.launcher) this.launcher.stop(w.id);
        else this.retired.set(w.id, true);
        this.remove(w.id);
      }, "load-balancer idle"),
    );
  }

  private newWorker(id: string, state: LbWorkerState): LbWorker {
    const now = this.d.clock.now();
    const w: LbWorker = {
      id,
      endpointId: this.spec.id,
      kind: this.kind,
      state,
      inFlight: 0,
      createdAt: now,
      since: now,
      initializingAt: state === "initializing" && this.kind === "simulated" ? now : undefined,
      readyAt: undefined,
      target: undefined,
      served: 0,
    };
    this.workers.set(id, w);
    return w;
  }

  private setState(w: LbWorker, state: LbWorkerState): void {
    const now = this.d.clock.now();
    w.state = state;
    w.since = now;
    if (state === "initializing") w.initializingAt ??= now;
    if (state === "ready") w.readyAt ??= now;
  }

  private drop(waiter: Waiter): void {
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
    this.d.clock.cancel(waiter.timer);
    waiter.waiting();
  }
}
