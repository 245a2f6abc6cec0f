import type { Context } from "hono";
import type { VirtualClock } from "../domain/clock.js";
import type { ObservabilityStore } from "../domain/observability.js";
import type { AppEnv } from "./env.js";
import type { RouteInfo } from "./route-info.js";

const TRIM_EVERY = 1000;

/**
 * The request journal: each service request, once answered, with method, path, endpoint,
 * operation, status (0 when the connection was dropped), virtual time, duration, and the body
 * with secrets redacted. The Authorization header is never kept. `keep` 0 turns it off.
 */
export class RequestJournal {
  private written = 0;

  constructor(
    private readonly store: ObservabilityStore,
    private readonly clock: VirtualClock,
    private readonly keep: number,
  ) {}

  get enabled(): boolean {
    return this.keep > 0;
  }

  /** The virtual time a request arrived, recorded with it. */
  now(): number {
    return this.clock.now();
  }

  /** Records the answered request; a promise only when its body is still being read. */
  record(c: Context<AppEnv>, info: RouteInfo, at: number, startedMs: number): Promise<void> | undefined {
    const cached = (c.req.bodyCache as { text?: Promise<string> }).text;
    const status = c.get("dropped") ? 0 : c.res.status;
    const durationMs = Math.round((performance.now() - startedMs) * 100) / 100;
    const write = (bodyText: string | undefined) => {
      this.store.appendRequest({ method: c.req.method, path: c.req.path, endpoint: info.endpoint, operation: info.operation, status, at, durationMs, bodyText });
      if (++this.written % TRIM_EVERY === 0) this.store.trimRequests(this.keep);
    };
    if (!cached) {
      write(undefined);
      return undefined;
    }
    return cached.then(write);
  }
}
