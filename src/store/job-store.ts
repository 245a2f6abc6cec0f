import type { Job, JobStatus, StreamItem } from "../domain/job.js";
import { JOB_STATUSES } from "../domain/job.js";
import type { JobFilter, JobStore, JobSummary } from "../domain/ports.js";
import type { Statement } from "better-sqlite3";
import type { Db } from "./db.js";
import { COLUMNS, DEADLINE_AT, DEADLINE_WRITE, fromArray, fromRow, LIST_WHERE, PARAMS, SUMMARY_COLUMNS, UPDATES, values, WRITE_OF, WRITES, type JobRow } from "./job-rows.js";

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
