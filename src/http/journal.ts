import type { VirtualClock } from "../domain/clock.js";
import type { ObservabilityStore, RequestRecord } from "../domain/observability.js";
import type { RouteInfo } from "./route-info.js";
import { BODY_KEPT_BYTES } from "../domain/redact.js";

const TRIM_EVERY = 1000;

/** What the journal reads of an answered request, whichever entry answered it (see `Exchange`). */
export interface JournalSource {
  readonly method: string;
  readonly path: string;
  /** The path the journal shows, when not `path`: the client's, for a request a route passed on. */
  journalPath?(): string | undefined;
  /** The query string, without its `?`; undefined when there is none. */
  query(): string | undefined;
  /** The status answered (or being answered). */
  status(): number;
  /** Whether the connection was cut instead (journaled as 0). */
  dropped(): boolean;
  /** The request body as read; undefined when none was, a promise while it is still being read. */
  bodyText(): string | undefined | Promise<string>;
  /** The body of the error answered. */
  problemText(): string | undefined;
}

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

  /** Records an answered request; a promise only when its body is still being read. */
  record(x: JournalSource, info: RouteInfo, at: number, startedMs: number): Promise<void> | undefined {
    const status = x.dropped() ? 0 : x.status();
    const entry: RequestRecord = {
      method: x.method,
      path: x.journalPath?.() ?? x.path,
      query: x.query(),
      endpoint: info.endpoint,
      operation: info.operation,
      status,
      at,
      durationMs: this.since(startedMs),
      bodyText: undefined,
      // Every error answer is made from `problemAnswer`, whose body the exchange keeps for this.
      responseText: status >= 400 ? x.problemText() : undefined,
    };
    const body = x.bodyText();
    if (!(body instanceof Promise)) {
      entry.bodyText = body;
      this.write(entry);
      return undefined;
    }
    return body.then((bodyText) => {
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
