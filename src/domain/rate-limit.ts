import { EmulatorError } from "./errors.js";
import { LOAD_BALANCER_OPERATION } from "./operations.js";
import { LB_RATE_LIMIT_CONCURRENT_DEFAULT, LB_RATE_LIMIT_REQUESTS_DEFAULT, QUEUE_RATE_LIMITS, QUEUE_RATE_WINDOW_MS, REST_RATE_KEYS_MAX, REST_RATE_LIMIT_WINDOWS } from "./limits.js";

/** What the limiters read the time from: the virtual clock. */
export interface NowSource {
  now(): number;
}

export type RestWindowName = (typeof REST_RATE_LIMIT_WINDOWS)[number]["name"];

/** One window's state after a request, as the `RateLimit` and `RateLimit-Policy` headers report it. */
export interface RestWindowReport {
  name: RestWindowName;
  /** Quota of the window (`q`). */
  quota: number;
  /** Window length in seconds (`w`). */
  windowSeconds: number;
  /** Requests left in the current window (`r`). */
  remaining: number;
  /** Whole seconds until the window resets (`t`), 1..windowSeconds. */
  resetSeconds: number;
}

export interface RestDecision {
  allowed: boolean;
  windows: RestWindowReport[];
  /** The exhausted window that refused the request (the one that resets last). */
  exceeded: RestWindowReport | undefined;
}

/**
 * The REST surface's quotas per API key: fixed windows aligned to the UTC minute, hour and day of
 * the virtual clock (the real service's example headers, `t=12`, `t=1812`, `t=45012`, are
 * consistent with that: each is the time to the next boundary). A refused request uses no quota.
 *
 * The counts of at most {@link REST_RATE_KEYS_MAX} keys are kept, in fixed tables of numbers, one
 * slot per key: a new key past the bound takes the slot of the key counted first. A key costs no
 * object of its own, so keys that come and go (open auth takes any) leave no garbage behind to
 * grow the heap between collections.
 */
export class RestRateLimiter {
  private readonly slotOf = new Map<string, number>();
  private readonly keyAt: Array<string | undefined> = new Array<string | undefined>(REST_RATE_KEYS_MAX);
  private next = 0;
  /** Window starts and requests counted, `slot × windows + window`. */
  private readonly starts: Float64Array;
  private readonly used: Uint32Array;
  private readonly windows: ReadonlyArray<{ name: RestWindowName; ms: number; quota: number }>;

  constructor(
    private readonly clock: NowSource,
    quotas: Readonly<Record<RestWindowName, number>>,
  ) {
    this.windows = REST_RATE_LIMIT_WINDOWS.map((w) => ({ name: w.name, ms: w.ms, quota: quotas[w.name] }));
    this.starts = new Float64Array(REST_RATE_KEYS_MAX * this.windows.length);
    this.used = new Uint32Array(REST_RATE_KEYS_MAX * this.windows.length);
  }

  /** Keys counted now (at most {@link REST_RATE_KEYS_MAX}). */
  get size(): number {
    return this.slotOf.size;
  }

  /** Quota and length of each window (the static `RateLimit-Policy`). */
  policy(): Array<{ name: RestWindowName; quota: number; windowSeconds: number }> {
    return this.windows.map((w) => ({ name: w.name, quota: w.quota, windowSeconds: w.ms / 1000 }));
  }

  /** Counts one request of `key` if every window has room; reports the windows either way. */
  take(key: string): RestDecision {
    const now = this.clock.now();
    const base = this.slot(key) * this.windows.length;
    let allowed = true;
    for (let i = 0; i < this.windows.length; i++) {
      const w = this.windows[i]!;
      const start = now - (now % w.ms);
      if (this.starts[base + i] !== start) {
        this.starts[base + i] = start;
        this.used[base + i] = 0;
      }
      if (this.used[base + i]! >= w.quota) allowed = false;
    }
    if (allowed) for (let i = 0; i < this.windows.length; i++) this.used[base + i]!++;
    const windows = this.windows.map((w, i) => ({
      name: w.name,
      quota: w.quota,
      windowSeconds: w.ms / 1000,
      remaining: Math.max(0, w.quota - this.used[base + i]!),
      resetSeconds: Math.ceil((this.starts[base + i]! + w.ms - now) / 1000),
    }));
    let exceeded: RestWindowReport | undefined;
    if (!allowed) for (const w of windows) if (w.remaining === 0 && (!exceeded || w.resetSeconds > exceeded.resetSeconds)) exceeded = w;
    return { allowed, windows, exceeded };
  }

  /** The slot of `key`, a new one (counts at zero) for a key not counted. */
  private slot(key: string): number {
    let slot = this.slotOf.get(key);
    if (slot !== undefined) return slot;
    slot = this.next;
    this.next = (slot + 1) % REST_RATE_KEYS_MAX;
    const dropped = this.keyAt[slot];
    if (dropped !== undefined) this.slotOf.delete(dropped);
    this.keyAt[slot] = key;
    this.slotOf.set(key, slot);
    const base = slot * this.windows.length;
    this.starts.fill(-1, base, base + this.windows.length);
    this.used.fill(0, base, base + this.windows.length);
    return slot;
  }

  /** Forgets every count (emulator reset). */
  reset(): void {
    this.slotOf.clear();
    this.keyAt.fill(undefined);
    this.next = 0;
  }
}

interface OperationState {
  windowStart: number;
  count: number;
  inFlight: number;
}

/** The operation whose row of the table applies (`/status-sync` is a held `/status`). */
const LIMIT_ROW_OF: ReadonlyMap<string, string> = new Map([["status-sync", "status"]]);

/** One row of the limits table: `method: "*"` counts every method. */
export interface LimitRow {
  method: string;
  requests: number;
  concurrent: number | undefined;
}

/** An operation's window after a request, for the `RateLimit` and `RateLimit-Policy` headers. */
export interface QueueWindowReport {
  /** Requests the window allows (the dynamic rule applied). */
  quota: number;
  remaining: number;
  /** Whole seconds until the window resets, 1..10. */
  resetSeconds: number;
  windowSeconds: number;
}

/** Releases a concurrency slot once the request is answered; calling it again does nothing. */
export type Release = () => void;
const NOTHING_HELD: Release = () => {};

/**
 * The specification's per-endpoint, per-operation queue limits: requests per fixed 10 s window of
 * the virtual clock (aligned to multiples of 10 s) and requests in flight at once. The rate is
 * dynamic: max(base, running workers × requestsPerWorker). A refused request uses no quota.
 */
export class QueueRateLimiter {
  private readonly states = new Map<string, OperationState>();
  private readonly rows: ReadonlyMap<string, LimitRow>;

  /** `extraRows`: rows beyond the specification's table (the load-balancing endpoints' `lb`). */
  constructor(
    private readonly clock: NowSource,
    private readonly requestsPerWorker: number,
    extraRows: Readonly<Record<string, LimitRow>> = {},
  ) {
    this.rows = new Map([...Object.entries(QUEUE_RATE_LIMITS), ...Object.entries(extraRows)]);
  }

  /**
   * Admits one request or throws RATE_LIMITED with a Retry-After. Operations and methods outside
   * the table (`/health`, `/retry`, a GET of `/run`) are not limited. `runningWorkers` is asked
   * only when the base rate is reached, so the common path stays a map lookup and two additions;
   * given `report`, it is asked every time, and the window is reported before the request is
   * admitted or refused (the `RateLimit` headers of that answer).
   */
  admit(endpointId: string, operation: string, method: string, runningWorkers: () => number, report?: (w: QueueWindowReport) => void): Release {
    const rowName = LIMIT_ROW_OF.get(operation) ?? operation;
    const row = this.rows.get(rowName);
    if (!row || (row.method !== method && row.method !== "*")) return NOTHING_HELD;
    const id = `${endpointId}\u0000${rowName}`;
    let s = this.states.get(id);
    if (!s) {
      s = { windowStart: 0, count: 0, inFlight: 0 };
      this.states.set(id, s);
    }
    const now = this.clock.now();
    const windowStart = now - (now % QUEUE_RATE_WINDOW_MS);
    if (s.windowStart !== windowStart) {
      s.windowStart = windowStart;
      s.count = 0;
    }
    const retryAfter = () => Math.max(1, Math.ceil((windowStart + QUEUE_RATE_WINDOW_MS - now) / 1000));
    const what = rowName === LOAD_BALANCER_OPERATION ? `requests to load-balancing endpoint "${endpointId}"` : `/${rowName} on endpoint "${endpointId}"`;
    let limit = row.requests;
    if (report) {
      limit = Math.max(row.requests, runningWorkers() * this.requestsPerWorker);
      const admitted = s.count < limit && (row.concurrent === undefined || s.inFlight < row.concurrent);
      report({ quota: limit, remaining: Math.max(0, limit - s.count - (admitted ? 1 : 0)), resetSeconds: retryAfter(), windowSeconds: QUEUE_RATE_WINDOW_MS / 1000 });
    } else if (s.count >= row.requests) {
      limit = Math.max(row.requests, runningWorkers() * this.requestsPerWorker);
    }
    if (s.count >= limit) {
      const after = retryAfter();
      throw new EmulatorError("RATE_LIMITED", `rate limit exceeded for ${what}: ${limit} requests per ${QUEUE_RATE_WINDOW_MS / 1000} s; retry in ${after} s`, { retryAfter: after });
    }
    if (row.concurrent !== undefined && s.inFlight >= row.concurrent) {
      throw new EmulatorError("RATE_LIMITED", `concurrency limit exceeded for ${what}: ${row.concurrent} requests at once; retry when one is answered`, { retryAfter: 1 });
    }
    s.count++;
    if (row.concurrent === undefined) return NOTHING_HELD;
    s.inFlight++;
    const state = s;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      state.inFlight--;
    };
  }

  /** Forgets every count (emulator reset); requests in flight release into the forgotten state. */
  reset(): void {
    this.states.clear();
  }
}

/** Both limiters (the queue's with the load-balancing endpoints' row) and the switch that turns them off. */
export class RateLimits {
  readonly rest: RestRateLimiter;
  readonly queue: QueueRateLimiter;

  constructor(
    clock: NowSource,
    readonly config: { enabled: boolean; rest: Readonly<Record<RestWindowName, number>>; queue: { requestsPerWorker: number }; loadBalancer?: { requests: number; concurrent: number } },
  ) {
    this.rest = new RestRateLimiter(clock, config.rest);
    // Load-balancing endpoints: one row of their own, every method counted.
    const lb = config.loadBalancer ?? { requests: LB_RATE_LIMIT_REQUESTS_DEFAULT, concurrent: LB_RATE_LIMIT_CONCURRENT_DEFAULT };
    this.queue = new QueueRateLimiter(clock, config.queue.requestsPerWorker, { [LOAD_BALANCER_OPERATION]: { method: "*", requests: lb.requests, concurrent: lb.concurrent } });
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  reset(): void {
    this.rest.reset();
    this.queue.reset();
  }
}
