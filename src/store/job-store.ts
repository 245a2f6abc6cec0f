import type { Job, JobStatus, StreamItem } from "../domain/job.js";
import { JOB_STATUSES, nextDeadline } from "../domain/job.js";
import type { JobFilter, JobStore, JobSummary } from "../domain/ports.js";
import type { Statement } from "better-sqlite3";
import type { Db } from "./db.js";

interface JobRow {
  id: string;
  endpoint_id: string;
  kind: string;
  status: string;
  input: string;
  output: string | null;
  error: string | null;
  webhook: string | null;
  s3_config: string | null;
  execution_timeout_ms: number;
  ttl_ms: number;
  low_priority: number;
  created_at: number;
  queued_at: number;
  started_at: number | null;
  completed_at: number | null;
  worker_id: string | null;
  retries: number;
  attempt: number;
  queue_seq: number;
  expires_at: number;
  timeout_at: number | null;
  retain_until: number | null;
  deadline_at: number;
  stream_cursor: number;
}

const COLUMNS =
  "id, endpoint_id, kind, status, input, output, error, webhook, s3_config, execution_timeout_ms, ttl_ms, low_priority, created_at, queued_at, started_at, completed_at, worker_id, retries, attempt, queue_seq, expires_at, timeout_at, retain_until, deadline_at, stream_cursor";
/** The columns a listing reads: the payloads are left out, so a page stays cheap whatever their size. */
const SUMMARY_COLUMNS = COLUMNS.replace(/\b(input|output|error|s3_config)\b/g, (c) => (c === "input" ? "'{}' AS input" : `NULL AS ${c}`));
/** Optional filters in one prepared statement: a NULL parameter matches everything. */
const LIST_WHERE = "(@endpoint IS NULL OR endpoint_id = @endpoint) AND (@status IS NULL OR status = @status)";
const PARAMS = COLUMNS.split(", ").map(() => "?").join(", ");
const UPDATES = COLUMNS.split(", ")
  .filter((c) => c !== "id")
  .map((c) => `${c} = excluded.${c}`)
  .join(", ");

/**
 * Hot reads (status, the scheduler's next job, due deadlines) fetch rows as arrays: better-sqlite3
 * builds a 25-key object per row slowly (about 9 µs); an array plus this literal takes about 4.
 * The literal follows COLUMNS, and the constructor checks that the statements agree.
 */
const rowOf = (a: unknown[]): JobRow =>
  ({
    id: a[0],
    endpoint_id: a[1],
    kind: a[2],
    status: a[3],
    input: a[4],
    output: a[5],
    error: a[6],
    webhook: a[7],
    s3_config: a[8],
    execution_timeout_ms: a[9],
    ttl_ms: a[10],
    low_priority: a[11],
    created_at: a[12],
    queued_at: a[13],
    started_at: a[14],
    completed_at: a[15],
    worker_id: a[16],
    retries: a[17],
    attempt: a[18],
    queue_seq: a[19],
    expires_at: a[20],
    timeout_at: a[21],
    retain_until: a[22],
    deadline_at: a[23],
    stream_cursor: a[24],
  }) as JobRow;
const fromArray = (a: unknown[]): Job => fromRow(rowOf(a));
/** Where `deadline_at` is in a row read as an array. */
const DEADLINE_AT = COLUMNS.split(", ").indexOf("deadline_at");

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const parse = (v: string | null): unknown => (v === null ? undefined : JSON.parse(v));
const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/**
 * Each field of a job, its column and how it is written: the one mapping from jobs to rows, in
 * COLUMNS order (the constructor checks), with `deadline_at` derived from the job.
 */
const WRITES: ReadonlyArray<readonly [column: string, field: keyof Job | null, write: (j: Job) => unknown]> = [
  ["id", "id", (j) => j.id],
  ["endpoint_id", "endpointId", (j) => j.endpointId],
  ["kind", "kind", (j) => j.kind],
  ["status", "status", (j) => j.status],
  ["input", "input", (j) => JSON.stringify(j.input)],
  ["output", "output", (j) => json(j.output)],
  ["error", "error", (j) => j.error ?? null],
  ["webhook", "webhook", (j) => j.webhook ?? null],
  ["s3_config", "s3Config", (j) => json(j.s3Config)],
  ["execution_timeout_ms", "executionTimeoutMs", (j) => j.executionTimeoutMs],
  ["ttl_ms", "ttlMs", (j) => j.ttlMs],
  ["low_priority", "lowPriority", (j) => (j.lowPriority ? 1 : 0)],
  ["created_at", "createdAt", (j) => j.createdAt],
  ["queued_at", "queuedAt", (j) => j.queuedAt],
  ["started_at", "startedAt", (j) => j.startedAt ?? null],
  ["completed_at", "completedAt", (j) => j.completedAt ?? null],
  ["worker_id", "workerId", (j) => j.workerId ?? null],
  ["retries", "retries", (j) => j.retries],
  ["attempt", "attempt", (j) => j.attempt],
  ["queue_seq", "queueSeq", (j) => j.queueSeq],
  ["expires_at", "expiresAt", (j) => j.expiresAt],
  ["timeout_at", "timeoutAt", (j) => j.timeoutAt ?? null],
  ["retain_until", "retainUntil", (j) => j.retainUntil ?? null],
  ["deadline_at", null, (j) => nextDeadline(j)],
  ["stream_cursor", "streamCursor", (j) => j.streamCursor],
];
const WRITE_OF = new Map(WRITES.filter(([, field]) => field !== null).map(([column, field, write]) => [field!, { column, write }]));
const DEADLINE_WRITE = WRITES.find(([column]) => column === "deadline_at")![2];
const values = (j: Job): unknown[] => WRITES.map(([, , write]) => write(j));

function fromRow(r: JobRow): Job {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    kind: r.kind as Job["kind"],
    status: r.status as JobStatus,
    input: JSON.parse(r.input) as Record<string, unknown>,
    output: parse(r.output),
    error: opt(r.error),
    webhook: opt(r.webhook),
    s3Config: parse(r.s3_config) as Job["s3Config"],
    executionTimeoutMs: r.execution_timeout_ms,
    ttlMs: r.ttl_ms,
    lowPriority: r.low_priority === 1,
    createdAt: r.created_at,
    queuedAt: r.queued_at,
    startedAt: opt(r.started_at),
    completedAt: opt(r.completed_at),
    workerId: opt(r.worker_id),
    retries: r.retries,
    attempt: r.attempt,
    queueSeq: r.queue_seq,
    expiresAt: r.expires_at,
    timeoutAt: opt(r.timeout_at),
    retainUntil: opt(r.retain_until),
    streamCursor: r.stream_cursor,
  };
}

/** How many jobs the store keeps at hand in memory (see `recent`). */
const RECENT_JOBS = 2_000;

/** Jobs and their stream chunks in SQLite, through prepared statements. */
export class SqliteJobStore implements JobStore {
  /**
   * The jobs written or read lately, by id, so that `/status` polls and the scheduler's reads of a
   * running job skip SQLite and the parsing of its row. Every write of this store keeps an entry
   * true (a partial save applies the same fields to it); `forget()` after the database was
   * replaced under the store. Bounded: the oldest entries leave first. Entries are never handed
   * to code that changes them: jobs are changed by copying (Transitions), and the scheduler gives
   * handlers the input of a job read fresh from SQLite.
   */
  private readonly recent = new Map<string, Job>();
  /**
   * Endpoints whose queue was found empty and has had no job enter it since: the scheduler looks
   * for a next job after every submission and every finish, and mostly finds none.
   */
  private readonly emptyQueues = new Set<string>();
  private readonly s;
  private readonly dueByLimit = new Map<number, Statement<[], unknown[]>>();
  /** One transaction wrapper, made once: better-sqlite3 builds several functions per wrapper. */
  private readonly inTx: (fn: () => unknown) => unknown;

  /** `UPDATE` statements by the fields they write (a transition changes a few columns of 25). */
  private readonly updates = new Map<string, { statement: Statement<unknown[]>; writes: Array<(j: Job) => unknown> }>();

  constructor(private readonly db: Db) {
    if (WRITES.map(([c]) => c).join(", ") !== COLUMNS) throw new Error("job-store: WRITES does not follow COLUMNS");
    this.inTx = db.transaction((fn: () => unknown) => fn());
    const p = <T = unknown>(sql: string) => db.prepare<unknown[], T>(sql);
    const rows = (sql: string) => this.rawRows(sql);
    this.s = {
      // Positional parameters: binding 25 named ones from an object costs more than the write.
      insert: p(`INSERT INTO jobs (${COLUMNS}) VALUES (${PARAMS})`),
      // An upsert changes the row in place: only the indexes whose columns changed are touched,
      // where INSERT OR REPLACE deletes and re-inserts the row in every index.
      save: p(`INSERT INTO jobs (${COLUMNS}) VALUES (${PARAMS}) ON CONFLICT (id) DO UPDATE SET ${UPDATES}`),
      get: rows(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`),
      delete: p(`DELETE FROM jobs WHERE id = ?`),
      deleteChunks: p(`DELETE FROM stream_chunks WHERE job_id = ?`),
      nextQueued: rows(`SELECT ${COLUMNS} FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' ORDER BY queue_seq LIMIT 1`),
      demand: p<{ n: number }>(
        `SELECT COUNT(*) AS n FROM (SELECT 1 FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' AND low_priority = 0 LIMIT ?)`,
      ),
      countByStatus: p<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM jobs WHERE endpoint_id = ? GROUP BY status`),
      busy: p<{ worker_id: string }>(`SELECT DISTINCT worker_id FROM jobs WHERE endpoint_id = ? AND status = 'IN_PROGRESS' AND worker_id IS NOT NULL`),
      active: p<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE status IN ('IN_QUEUE', 'IN_PROGRESS')`),
      sumRetries: p<{ n: number | null }>(`SELECT SUM(retries) AS n FROM jobs WHERE endpoint_id = ?`),
      queuedIds: p<{ id: string }>(`SELECT id FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE'`),
      purge: p(`DELETE FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE'`),
      nextDeadline: p<{ at: number | null }>(`SELECT MIN(deadline_at) AS at FROM jobs`),
      list: p<JobRow>(`SELECT ${SUMMARY_COLUMNS} FROM jobs WHERE ${LIST_WHERE} ORDER BY created_at DESC, queue_seq DESC LIMIT @limit OFFSET @offset`),
      listCount: p<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE ${LIST_WHERE}`),
      byStatus: rows(`SELECT ${COLUMNS} FROM jobs WHERE status = ? ORDER BY queue_seq`),
      maxSeq: p<{ n: number | null }>(`SELECT MAX(queue_seq) AS n FROM jobs`),
      addChunk: p(`INSERT INTO stream_chunks (job_id, seq, item) VALUES (?, ?, ?)`),
      chunkCount: p<{ n: number }>(`SELECT COUNT(*) AS n FROM stream_chunks WHERE job_id = ?`),
      chunks: p<{ item: string }>(`SELECT item FROM stream_chunks WHERE job_id = ? AND seq >= ? ORDER BY seq`),
      endpointJobs: p(`DELETE FROM jobs WHERE endpoint_id = ?`),
    };
  }

  insert(job: Job): void {
    this.s.insert.run(values(job));
    this.remember(job);
    if (job.status === "IN_QUEUE") this.emptyQueues.delete(job.endpointId);
  }

  get(id: string): Job | undefined {
    const hit = this.recent.get(id);
    if (hit) return hit;
    const r = this.s.get.get(id);
    if (!r) return undefined;
    const job = fromArray(r);
    this.remember(job);
    return job;
  }

  /** Drops every job kept in memory: the database changed under the store (a snapshot was restored). */
  forget(): void {
    this.recent.clear();
    this.emptyQueues.clear();
  }

  private remember(job: Job): void {
    if (this.recent.size >= RECENT_JOBS && !this.recent.has(job.id)) this.recent.delete(this.recent.keys().next().value!);
    this.recent.set(job.id, job);
  }

  save(job: Job, changed?: readonly (keyof Job)[]): void {
    if (job.status === "IN_QUEUE") this.emptyQueues.delete(job.endpointId);
    if (changed === undefined || changed.includes("id")) {
      this.s.save.run(values(job));
      this.remember(job);
      return;
    }
    const key = changed.join(",");
    let st = this.updates.get(key);
    if (!st) {
      const fields = [...new Set(changed)].flatMap((f) => WRITE_OF.get(f) ?? []);
      const sets = [...fields.map((f) => `${f.column} = ?`), "deadline_at = ?"].join(", ");
      st = { statement: this.db.prepare(`UPDATE jobs SET ${sets} WHERE id = ?`), writes: [...fields.map((f) => f.write), DEADLINE_WRITE, (j: Job) => j.id] };
      this.updates.set(key, st);
    }
    const args = new Array<unknown>(st.writes.length);
    for (let i = 0; i < args.length; i++) args[i] = st.writes[i]!(job);
    if (st.statement.run(args).changes === 0) {
      // A row deleted meanwhile (purged, expired) is written whole again, as before.
      this.s.save.run(values(job));
      this.remember(job);
      return;
    }
    const kept = this.recent.get(job.id);
    if (kept) {
      const next = { ...kept };
      for (const f of changed) (next as Record<string, unknown>)[f] = job[f];
      this.recent.set(job.id, next);
    }
  }

  delete(id: string): void {
    this.recent.delete(id);
    this.s.delete.run(id); // its stream chunks go too (trigger jobs_delete_chunks)
  }

  nextQueued(endpointId: string): Job | undefined {
    if (this.emptyQueues.has(endpointId)) return undefined;
    const r = this.s.nextQueued.get(endpointId);
    if (!r) this.emptyQueues.add(endpointId);
    return r ? fromArray(r) : undefined;
  }

  countScalingDemand(endpointId: string, limit: number): number {
    if (this.emptyQueues.has(endpointId)) return 0;
    return this.s.demand.get(endpointId, limit)?.n ?? 0;
  }

  countByStatus(endpointId: string): Record<JobStatus, number> {
    const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    for (const r of this.s.countByStatus.all(endpointId)) counts[r.status as JobStatus] = r.n;
    return counts;
  }

  busyWorkers(endpointId: string): Set<string> {
    return new Set(this.s.busy.all(endpointId).map((r) => r.worker_id));
  }

  countActive(): number {
    return this.s.active.get()?.n ?? 0;
  }

  sumRetries(endpointId: string): number {
    return this.s.sumRetries.get(endpointId)?.n ?? 0;
  }

  purgeQueued(endpointId: string): string[] {
    return this.tx(() => {
      const ids = this.s.queuedIds.all(endpointId).map((r) => r.id);
      this.s.purge.run(endpointId);
      for (const id of ids) this.recent.delete(id);
      return ids;
    });
  }

  due(now: number, limit: number): { jobs: Job[]; next: number | undefined } {
    // The limit is written into the SQL, one statement per limit: bound as a parameter, it made
    // this query ~3x slower (30 µs instead of 9), and the deadline timer runs it at every firing.
    // One row more than the limit and no `<= now` filter: the row after the due ones says when the
    // timer fires next, without a second query.
    const n = Math.max(1, Math.floor(limit));
    let st = this.dueByLimit.get(n);
    if (!st) {
      st = this.rawRows(`SELECT ${COLUMNS} FROM jobs ORDER BY deadline_at LIMIT ${n + 1}`) as Statement<[], unknown[]>;
      this.dueByLimit.set(n, st);
    }
    const jobs: Job[] = [];
    for (const row of st.all()) {
      const at = row[DEADLINE_AT] as number;
      if (at > now || jobs.length === n) return { jobs, next: at };
      jobs.push(fromArray(row));
    }
    return { jobs, next: undefined };
  }

  nextDeadline(): number | undefined {
    return this.s.nextDeadline.get()?.at ?? undefined;
  }

  list(filter: JobFilter): { jobs: JobSummary[]; total: number } {
    const where = { endpoint: filter.endpointId ?? null, status: filter.status ?? null };
    return this.tx(() => ({
      jobs: this.s.list.all({ ...where, limit: filter.limit, offset: filter.offset }).map((r) => {
        const { input: _i, output: _o, error: _e, s3Config: _s, ...summary } = fromRow(r);
        return summary;
      }),
      total: this.s.listCount.get(where)?.n ?? 0,
    }));
  }

  listByStatus(status: JobStatus): Job[] {
    return this.s.byStatus.all(status).map(fromArray);
  }

  maxQueueSeq(): number {
    return this.s.maxSeq.get()?.n ?? 0;
  }

  appendChunks(jobId: string, items: StreamItem[]): void {
    this.tx(() => {
      let seq = this.chunkCount(jobId);
      for (const item of items) this.s.addChunk.run(jobId, seq++, JSON.stringify(item));
    });
  }

  chunkCount(jobId: string): number {
    return this.s.chunkCount.get(jobId)?.n ?? 0;
  }

  chunks(jobId: string, from: number): StreamItem[] {
    return this.s.chunks.all(jobId, from).map((r) => JSON.parse(r.item) as StreamItem);
  }

  clearChunks(jobId: string): void {
    this.s.deleteChunks.run(jobId);
  }

  deleteEndpointJobs(endpointId: string): void {
    this.recent.clear();
    this.emptyQueues.clear();
    this.s.endpointJobs.run(endpointId); // with their stream chunks (trigger jobs_delete_chunks)
  }

  deleteAll(): void {
    this.recent.clear();
    this.emptyQueues.clear();
    this.db.exec("DELETE FROM stream_chunks; DELETE FROM jobs;");
  }

  /** A statement returning rows as arrays in COLUMNS order (checked here, once). */
  private rawRows(sql: string): Statement<unknown[], unknown[]> {
    const st = this.db.prepare<unknown[], unknown[]>(sql).raw(true);
    const names = st.columns().map((c) => c.name).join(", ");
    if (names !== COLUMNS) throw new Error(`job-store: ${sql} reads columns "${names}", expected "${COLUMNS}"`);
    return st;
  }

  tx<T>(fn: () => T): T {
    return this.inTx(fn) as T;
  }
}
