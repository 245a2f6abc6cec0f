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

  /** Records the request answered through the app; a promise only when its body is still being read. */
  record(c: Context<AppEnv>, info: RouteInfo, at: number, startedMs: number): Promise<void> | undefined {
    const cached = (c.req.bodyCache as { text?: Promise<string> }).text;
    const status = c.get("dropped") ? 0 : c.res.status;
    const durationMs = this.since(startedMs);
    if (!cached) {
      this.write(c.req.method, c.req.path, info, status, at, durationMs, undefined);
      return undefined;
    }
    return cached.then((bodyText) => this.write(c.req.method, c.req.path, info, status, at, durationMs, bodyText));
  }

  /** ms since `startedMs` (`performance.now()`), to the hundredth. */
  since(startedMs: number): number {
    return Math.round((performance.now() - startedMs) * 100) / 100;
  }

  /** Records an answered request; `bodyText` as read, undefined when none was. */
  write(method: string, path: string, info: RouteInfo, status: number, at: number, durationMs: number, bodyText: string | undefined): void {
    this.store.appendRequest({ method, path, endpoint: info.endpoint, operation: info.operation, status, at, durationMs, bodyText });
    if (++this.written % TRIM_EVERY === 0) this.store.trimRequests(this.keep);
  }
}
