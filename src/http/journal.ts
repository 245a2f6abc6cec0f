import type { Context } from "hono";
import type { VirtualClock } from "../domain/clock.js";
import type { ObservabilityStore, RequestRecord } from "../domain/observability.js";
import type { AppEnv } from "./env.js";
import type { RouteInfo } from "./route-info.js";

const TRIM_EVERY = 1000;

/**
 * The request journal: each service request, once answered, with method, path, query string,
 * endpoint, operation, status (0 when the connection was dropped), virtual time, duration, the
 * body with secrets redacted, and the body of error answers. The Authorization header is never
 * kept. `keep` 0 turns it off.
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
    const url = c.req.url;
    const mark = url.indexOf("?");
    const entry: RequestRecord = {
      method: c.req.method,
      path: c.req.path,
      query: mark < 0 || mark === url.length - 1 ? undefined : url.slice(mark + 1),
      endpoint: info.endpoint,
      operation: info.operation,
      status,
      at,
      durationMs: this.since(startedMs),
      bodyText: undefined,
      // Every error answer of the app is made by `problemResponse`, which keeps its body here.
      responseText: status >= 400 ? c.get("problemBody") : undefined,
    };
    if (!cached) {
      this.write(entry);
      return undefined;
    }
    return cached.then((bodyText) => {
      entry.bodyText = bodyText;
      this.write(entry);
    });
  }

  /** ms since `startedMs` (`performance.now()`), to the hundredth. */
  since(startedMs: number): number {
    return Math.round((performance.now() - startedMs) * 100) / 100;
  }

  /**
   * Records an answered request: `bodyText` as read (undefined when none was), `responseText` the
   * body of an error answer. The fields in this order, so that every record has one shape.
   */
  write(entry: RequestRecord): void {
    this.store.appendRequest(entry);
    if (++this.written % TRIM_EVERY === 0) this.store.trimRequests(this.keep);
  }
}
