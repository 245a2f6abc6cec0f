import type { JobEvent, JournalEntry, JournalFilter, ObservabilityStore, RequestRecord, WebhookDelivery } from "../domain/observability.js";
import { WORKER_OPERATIONS } from "../domain/operations.js";
import { keptQuery, keptRequestBody, keptResponseBody } from "../domain/redact.js";
import type { Db } from "./db.js";
import { EventQueue, type StoredEvent, type TimelineRow } from "./event-queue.js";
import { RequestQueue } from "./request-queue.js";
import { RowInserter } from "./row-inserter.js";
import { WriteBehind } from "./write-behind.js";

interface StoredRow { job_id: string; endpoint_id: string; events: string }
interface DeliveryRow { job_id: string; endpoint_id: string; url: string; attempt: number; status: number | null; error: string | null; at: number }
interface RequestRow {
  method: string;
  path: string;
  query: string | null;
  endpoint_id: string | null;
  operation: string | null;
  status: number;
  at: number;
  duration_ms: number;
  body: string | null;
  response: string | null;
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/** A journal row's values, in the order of its columns, into `out` from `at`. */
const requestRow = (r: RequestRecord, out: unknown[], at: number): void => {
  out[at] = r.method;
  out[at + 1] = r.path;
  out[at + 2] = r.query === undefined ? null : keptQuery(r.query);
  out[at + 3] = r.endpoint ?? null;
  out[at + 4] = r.operation ?? null;
  out[at + 5] = r.status;
  out[at + 6] = r.at;
  out[at + 7] = r.durationMs;
  out[at + 8] = r.bodyText === undefined ? null : JSON.stringify(keptRequestBody(r.bodyText));
  out[at + 9] = r.responseText === undefined ? null : JSON.stringify(keptResponseBody(r.responseText));
};

/**
 * Job timelines, webhook attempts and the request journal in SQLite. Rows are written behind:
 * gathered during one turn of the event loop and inserted in one transaction at its end (every
 * read flushes first), so the few rows each request and each transition add cost one commit per
 * turn instead of one each. A job's timeline events of one turn share one row.
 *
 * In a database in memory, which keeps nothing past the process anyway, timeline events wait in
 * memory until something needs them in SQLite (a snapshot, an export): a read of a timeline
 * takes the written rows and the waiting events together, and the trimming of the logs drops
 * the oldest waiting events. Under load nobody needs them, so most are never written, nor their
 * rows made.
 *
 * Journal rows wait longer. In a database file they join the next commit, or get one of their
 * own within `LATER_MS`. In a database in memory, which keeps nothing past the process anyway,
 * they stay in memory (at most the journal's size, the oldest dropped first) until something
 * needs them in SQLite: a read of the journal, a snapshot, an export. Under load nobody reads,
 * so most are never written, nor their bodies parsed and redacted.
 */
export class SqliteObservabilityStore implements ObservabilityStore {
  private readonly s;
  private pending: Array<() => void> = [];
  /** Journal rows not written yet, oldest first (see above). */
  private readonly pendingRequests = new RequestQueue();
  /**
   * A database in memory: journal rows and timeline events are held until needed rather than
   * written within `LATER_MS` or at the end of the turn (see above).
   */
  private readonly hold: boolean;
  /** Timeline events not written yet, oldest first. */
  private readonly pendingEvents = new EventQueue();

  /** @param writes commits the rows at the end of each turn (with the other stores' of the database). */
  constructor(
    private readonly db: Db,
    private readonly writes: WriteBehind = new WriteBehind(db),
  ) {
    this.hold = db.memory;
    this.s = {
      events: db.prepare<[string], StoredRow>(`SELECT job_id, endpoint_id, events FROM job_timeline WHERE job_id = ? ORDER BY seq`),
      addDelivery: db.prepare(`INSERT INTO webhook_deliveries (job_id, endpoint_id, url, attempt, status, error, at) VALUES (?, ?, ?, ?, ?, ?, ?)`),
      deliveries: db.prepare<[], DeliveryRow>(`SELECT * FROM webhook_deliveries ORDER BY seq`),
      jobDeliveries: db.prepare<[string], DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE job_id = ? ORDER BY seq`),
      trimRequests: db.prepare<[number]>(`DELETE FROM request_journal WHERE seq <= (SELECT MAX(seq) FROM request_journal) - ?`),
    };
    const timelineRows = new RowInserter<TimelineRow>(db, "job_timeline", "job_id, endpoint_id, events", (r, out, at) => {
      out[at] = r.jobId;
      out[at + 1] = r.endpointId;
      out[at + 2] = JSON.stringify(r.events);
    }, 8);
    const journalRows = new RowInserter(db, "request_journal", "method, path, query, endpoint_id, operation, status, at, duration_ms, body, response", requestRow, 32);
    writes.add({
      pending: (all) => this.pendingEvents.length > 0 && (all || !this.hold),
      write: () => timelineRows.insert(this.pendingEvents.takeRows()),
    });
    writes.add({
      pending: () => this.pending.length > 0,
      write: () => {
        const rows = this.pending;
        this.pending = [];
        for (const write of rows) write();
      },
    });
    writes.add({
      pending: (all) => this.pendingRequests.length > 0 && (all || !this.hold),
      write: () => journalRows.insert(this.pendingRequests.takeAll()),
    });
  }

  /** Writes every row still waiting, journal rows held in memory included. */
  flush(): void {
    this.writes.flush(true);
  }

  private later(write: () => void): void {
    this.pending.push(write);
    this.writes.schedule();
  }

  appendEvent(e: JobEvent): void {
    this.pendingEvents.push(e);
    if (!this.hold) this.writes.schedule();
  }

  /** The rows written, then the events waiting: those are always the newer. */
  events(jobId: string): JobEvent[] {
    const written = this.s.events.all(jobId).flatMap((r) =>
      (JSON.parse(r.events) as StoredEvent[]).map(([at, from, to, cause]) => ({
        jobId: r.job_id,
        endpointId: r.endpoint_id,
        at,
        from: opt(from),
        to: opt(to),
        cause,
      })),
    );
    return written.concat(this.pendingEvents.ofJob(jobId));
  }

  appendDelivery(d: WebhookDelivery): void {
    this.later(() => this.s.addDelivery.run(d.jobId, d.endpointId, d.url, d.attempt, d.status ?? null, d.error ?? null, d.at));
  }

  deliveries(jobId?: string): WebhookDelivery[] {
    this.writes.flush();
    const rows = jobId === undefined ? this.s.deliveries.all() : this.s.jobDeliveries.all(jobId);
    return rows.map((r) => ({ jobId: r.job_id, endpointId: r.endpoint_id, url: r.url, attempt: r.attempt, status: opt(r.status), error: opt(r.error), at: r.at }));
  }

  appendRequest(r: RequestRecord): void {
    this.pendingRequests.push(r);
    if (!this.hold) this.writes.scheduleLater();
  }

  requests(f: JournalFilter): { requests: JournalEntry[]; count: number } {
    this.flush();
    const where: string[] = [];
    const args: Array<string | number> = [];
    if (f.endpoint !== undefined) {
      where.push("endpoint_id = ?");
      args.push(f.endpoint);
    }
    if (f.operation !== undefined) {
      where.push("operation = ?");
      args.push(f.operation);
    }
    if (f.status !== undefined) {
      where.push("status = ?");
      args.push(f.status);
    }
    if (f.worker !== undefined) {
      const ops = [...WORKER_OPERATIONS];
      const list = `operation IN (${ops.map(() => "?").join(", ")})`;
      where.push(f.worker === "only" ? list : `(operation IS NULL OR NOT ${list})`);
      args.push(...ops);
    }
    const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const count = (this.db.prepare(`SELECT COUNT(*) AS n FROM request_journal ${clause}`).get(...args) as { n: number }).n;
    // The newest `limit` entries, oldest first.
    const rows = (this.db.prepare(`SELECT * FROM request_journal ${clause} ORDER BY seq DESC LIMIT ?`).all(...args, f.limit ?? 1000) as RequestRow[]).reverse();
    return {
      count,
      requests: rows.map((r) => ({
        method: r.method,
        path: r.path,
        query: opt(r.query),
        endpoint: opt(r.endpoint_id),
        operation: opt(r.operation),
        status: r.status,
        at: r.at,
        durationMs: r.duration_ms,
        body: r.body === null ? undefined : (JSON.parse(r.body) as unknown),
        response: r.response === null ? undefined : (JSON.parse(r.response) as unknown),
      })),
    };
  }

  clearRequests(): number {
    this.flush();
    return this.db.prepare(`DELETE FROM request_journal`).run().changes;
  }

  trimLogs(keep: { timelineRows: number; timelineEvents: number; deliveries: number }): void {
    const waiting = this.pendingEvents;
    if (waiting.length > keep.timelineEvents) waiting.dropOldest(waiting.length - keep.timelineEvents);
    this.trim("job_timeline", keep.timelineRows);
    this.trim("webhook_deliveries", keep.deliveries);
  }

  trimRequests(max: number): void {
    // The newest `max` of the rows written and those waiting: the waiting ones are the newer.
    const waiting = this.pendingRequests;
    if (waiting.length > max) waiting.dropOldest(waiting.length - max);
    this.s.trimRequests.run(max - waiting.length);
  }

  private trim(table: string, max: number): void {
    this.writes.flush();
    this.db.prepare(`DELETE FROM ${table} WHERE seq <= (SELECT MAX(seq) FROM ${table}) - ?`).run(max);
  }

  clearAll(): void {
    this.pending = [];
    this.pendingRequests.clear();
    this.pendingEvents.clear();
    this.db.exec(`DELETE FROM job_timeline; DELETE FROM webhook_deliveries; DELETE FROM request_journal;`);
  }
}
