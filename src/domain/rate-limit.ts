import { EmulatorError } from "./errors.js";
import { LOAD_BALANCER_OPERATION } from "./operations.js";
import { LB_RATE_LIMIT_CONCURRENT_DEFAULT, LB_RATE_LIMIT_REQUESTS_DEFAULT, QUEUE_RATE_LIMITS, QUEUE_RATE_WINDOW_MS, REST_RATE_KEYS_MAX, REST_RATE_LIMIT_WINDOWS } from "./limits.js";
import { RecentMap } from "./recent-map.js";

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

interface KeyCounters {
  starts: number[];
  used: number[];
}

/**
 * The REST surface's quotas per API key: fixed windows aligned to the UTC minute, hour and day of
 * the virtual clock (the real service's example headers, `t=12`, `t=1812`, `t=45012`, are
 * consistent with that: each is the time to the next boundary). A refused request uses no quota.
 */
export class RestRateLimiter {
  private readonly counters = new RecentMap<string, KeyCounters>(REST_RATE_KEYS_MAX);
  private readonly windows: ReadonlyArray<{ name: RestWindowName; ms: number; quota: number }>;

  constructor(
    private readonly clock: NowSource,
    quotas: Readonly<Record<RestWindowName, number>>,
  ) {
    this.windows = REST_RATE_LIMIT_WINDOWS.map((w) => ({ name: w.name, ms: w.ms, quota: quotas[w.name] }));
  }

  /** Quota and length of each window (the static `RateLimit-Policy`). */
  policy(): Array<{ name: RestWindowName; quota: number; windowSeconds: number }> {
    return this.windows.map((w) => ({ name: w.name, quota: w.quota, windowSeconds: w.ms / 1000 }));
  }

  /** Counts one request of `key` if every window has room; reports the windows either way. */
  take(key: string): RestDecision {
    const now = this.clock.now();
    let c = this.counters.get(key);
    if (!c) {
      c = { starts: this.windows.map(() => -1), used: this.windows.map(() => 0) };
      this.counters.set(key, c);
    }
    let allowed = true;
    for (let i = 0; i < this.windows.length; i++) {
      const w = this.windows[i]!;
      const start = now - (now % w.ms);
      if (c.starts[i] !== start) {
        c.starts[i] = start;
        c.used[i] = 0;
      }
      if (c.used[i]! >= w.quota) allowed = false;
    }
    if (allowed) for (let i = 0; i < c.used.length; i++) c.used[i]!++;
    const windows = this.windows.map((w, i) => ({
      name: w.name,
      quota: w.quota,
      windowSeconds: w.ms / 1000,
      remaining: Math.max(0, w.quota - c.used[i]!),
      resetSeconds: Math.ceil((c.starts[i]! + w.ms - now) / 1000),
    }));
    let exceeded: RestWindowReport | undefined;
    if (!allowed) for (const w of windows) if (w.remaining === 0 && (!exceeded || w.resetSeconds > exceeded.resetSeconds)) exceeded = w;
    return { allowed, windows, exceeded };
  }

  /** Forgets every count (emulator reset). */
  reset(): void {
    this.counters.clear();
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
