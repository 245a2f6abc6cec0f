import type { Context } from "hono";
import type { VirtualClock } from "../domain/clock.js";
import type { ObservabilityStore, RequestRecord } from "../domain/observability.js";
import type { AppEnv } from "./env.js";
import type { RouteInfo } from "./route-info.js";
import { BODY_KEPT_BYTES } from "../domain/redact.js";

const TRIM_EVERY = 1000;

/**
 * The request journal: each service request, once answered, with method, path, query string,
 * endpoint, operation, status (0 when the connection was dropped), virtual time, duration, the
 * body with secrets redacted, and the body of error answers. The Authorization header is never
 * kept. `keep` 0 turns it off.
 */
export class RequestJournal {
  private written = 0;
  /** Bytes of body kept by each of the last `keep` entries (a ring), and their sum. */
  private readonly kept: Float64Array;
  private keptBytes = 0;

  /**
   * @param keep entries kept (0: off)
   * @param bodyBudget bytes of bodies the last `keep` entries may hold in all: an entry past it
   *   keeps a note of its body's size, so no sequence of requests grows the journal past it.
   */
  constructor(
    private readonly store: ObservabilityStore,
    private readonly clock: VirtualClock,
    private readonly keep: number,
    private readonly bodyBudget = Number.POSITIVE_INFINITY,
  ) {
    this.kept = new Float64Array(Math.max(1, keep));
  }

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
    const slot = this.written % this.kept.length;
    this.keptBytes -= this.kept[slot]!;
    let bytes = 0;
    const body = entry.bodyText;
    if (body !== undefined) {
      // Measured in UTF-16 units, as held: near enough to bytes for a bound.
      if (body.length > BODY_KEPT_BYTES) entry.bodyText = JSON.stringify(`[${body.length} bytes, not kept]`);
      else if (this.keptBytes + body.length > this.bodyBudget) entry.bodyText = JSON.stringify(`[${body.length} bytes, not kept: the journal's bodies reached journal.maxBodyBytes]`);
      else bytes = body.length;
    }
    this.kept[slot] = bytes;
    this.keptBytes += bytes;
    this.store.appendRequest(entry);
    if (++this.written % TRIM_EVERY === 0) this.store.trimRequests(this.keep);
  }
}
