import type { Job, JobStatus, Lane, StreamItem } from "../domain/job.js";
import { JOB_STATUSES, laneOf } from "../domain/job.js";
import type { JobFilter, JobStore, JobSummary } from "../domain/ports.js";
import type { Statement } from "better-sqlite3";
import type { Db } from "./db.js";
import { DueJobs } from "./due-jobs.js";
import { JobWrites, type Holding } from "./job-writes.js";
import { QueueIndex } from "./queue-index.js";
import { RecentMap } from "../domain/recent-map.js";
import { WriteBehind } from "./write-behind.js";
import { COLUMNS, fromArray, fromRow, jobColumns, LIST_WHERE, SUMMARY_COLUMNS, type JobRow, type PayloadRead } from "./job-rows.js";
import { PayloadParts } from "./payload-parts.js";
import { countsOf, StatusCounts } from "./status-counts.js";
import { heavy } from "./job-weight.js";
import type { RawJson } from "../domain/json-text.js";

/** How many jobs the store keeps at hand in memory (see `recent`). */
const RECENT_JOBS = 2_000;

/**
 * Jobs and their stream chunks in SQLite, through prepared statements, written behind.
 *
 * Writes of jobs are gathered during one turn of the event loop and written at its end in one
 * transaction, one statement per job: a job submitted, started and finished in the same turn (an
 * echo worker's job) costs one INSERT instead of an INSERT and two UPDATEs. Reads by id, the next
 * queued job and the scaling demand are answered from memory; every other read writes what waits
 * first, so SQL always sees every change. `whenDurable()` tells when what was written so far is
 * committed: the HTTP layer sends no answer to a write before that, so an acknowledged job is in
 * the database even if the process is killed the next moment. In memory (`holding`), a new job's
 * row waits as its values instead (job-writes.ts): read by id from there, written by `flush()`.
 */
export class SqliteJobStore implements JobStore {
  /**
   * The jobs written or read lately, by id, so that `/status` polls and the scheduler's reads of a
   * running job skip SQLite and the parsing of its row. A job with a write waiting is read from
   * that write (`JobWrites.peek`); once its row is written, its entry is the state written (a job
   * submitted, started and finished in one turn is put here once); `forget()` after the database
   * was replaced under the store. Bounded: the oldest entries leave first. Entries are never handed
   * to code that changes them: jobs are changed by copying (Transitions), and the scheduler gives
   * handlers a copy of the input.
   */
  private readonly recent = new RecentMap<string, Job>(RECENT_JOBS);
  /** The job writes waiting for the end of the turn. */
  private readonly behind: JobWrites;
  /**
   * The queued jobs of each endpoint's lane (`/run` traffic, batch requests), in queue order,
   * read from SQLite the first time the scheduler asks and kept true by every write since: the
   * scheduler looks for a next job after every submission and every finish. By lane, then
   * endpoint id (no key made per look-up: this runs on every /run).
   */
  private readonly lanes: Record<Lane, Map<string, QueueIndex>> = { standard: new Map(), batch: new Map() };
  /** Each endpoint's jobs by status and their retries (`/health`), once asked: kept true by every write. */
  private readonly counts = new StatusCounts();
  private readonly s;
  private readonly dueReader: DueJobs;
  /** One transaction wrapper, made once: better-sqlite3 builds several functions per wrapper. */
  private readonly inTx: (fn: () => unknown) => unknown;
  /** Large payloads, written a part at a time beside the rows (payload-parts.ts). */
  private readonly parts: PayloadParts;
  private readonly read: PayloadRead;

  /**
   * @param writes commits this store's writes at the end of each turn (with the other stores' of the database).
   * @param holding a database in memory: new jobs' rows wait in memory, up to this bound, until read with SQL (job-writes.ts)
   */
  constructor(
    private readonly db: Db,
    private readonly writes: WriteBehind = new WriteBehind(db),
    holding?: Holding,
  ) {
    // A rolled-back turn (a full disk): the jobs it held in memory are read again from SQLite,
    // so a job refused with 507 neither shows nor runs.
    this.parts = new PayloadParts(db, writes);
    this.parts.sweep();
    this.read = (column, small) => this.parts.read(column, small);
    const columns = jobColumns((_job, _field, value) => this.parts.column(value));
    this.dueReader = new DueJobs(db, (sql) => this.rawRows(sql), this.read);
    this.behind = new JobWrites(
      db,
      writes,
      columns,
      () => {
        this.counts.clear();
        this.recent.clear();
        this.lanes.standard.clear();
        this.lanes.batch.clear();
      },
      // A job is found among the writes waiting until its row is written, then among the recent
      // jobs: put there once, in its last state, rather than at each of its moves.
      (job) => this.remember(job),
      holding,
      RECENT_JOBS,
    );
    if (columns.WRITES.map(([c]) => c).join(", ") !== COLUMNS) throw new Error("job-store: WRITES does not follow COLUMNS");
    this.inTx = db.transaction((fn: () => unknown) => fn());
    const p = <T = unknown>(sql: string) => db.prepare<unknown[], T>(sql);
    const rows = (sql: string) => this.rawRows(sql);
    this.s = {
      get: rows(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`),
      deleteChunks: p(`DELETE FROM stream_chunks WHERE job_id = ?`),
      queued: p<{ id: string; queue_seq: number; low_priority: number }>(
        `SELECT id, queue_seq, low_priority FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' AND (batch_id IS NOT NULL) = ? ORDER BY queue_seq`,
      ),
      byBatch: p<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM jobs WHERE batch_id = ? GROUP BY status`),
      // In the order the batch's jobs were written, which is the order of its requests: a retry or
      // a lost worker gives a job a new queue position, never a new row.
      batchPage: this.rawRows(`SELECT ${COLUMNS} FROM jobs WHERE batch_id = ? ORDER BY rowid LIMIT ? OFFSET ?`),
      batchIds: p<{ id: string; status: string }>(`SELECT id, status FROM jobs WHERE batch_id = ?`),
      countByStatus: p<{ status: string; n: number }>(`SELECT status, COUNT(*) AS n FROM jobs WHERE endpoint_id = ? GROUP BY status`),
      active: p<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE status IN ('IN_QUEUE', 'IN_PROGRESS')`),
      sumRetries: p<{ n: number | null }>(`SELECT SUM(retries) AS n FROM jobs WHERE endpoint_id = ?`),
      // Batch requests leave with their batch (its cancel), not with /purge-queue.
      queuedIds: p<{ id: string }>(`SELECT id FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' AND batch_id IS NULL`),
      purge: p(`DELETE FROM jobs WHERE endpoint_id = ? AND status = 'IN_QUEUE' AND batch_id IS NULL`),
      nextDeadline: p<{ at: number | null }>(`SELECT MIN(deadline_at) AS at FROM jobs`),
      list: p<JobRow>(`SELECT ${SUMMARY_COLUMNS} FROM jobs WHERE ${LIST_WHERE} ORDER BY created_at DESC, queue_seq DESC LIMIT @limit OFFSET @offset`),
      listCount: p<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE ${LIST_WHERE}`),
      byStatus: rows(`SELECT ${COLUMNS} FROM jobs WHERE status = ? ORDER BY queue_seq`),
      maxSeq: p<{ n: number | null }>(`SELECT MAX(queue_seq) AS n FROM jobs`),
      addChunk: p(`INSERT INTO stream_chunks (job_id, seq, item) VALUES (?, ?, ?)`),
      // Chunks are numbered 0, 1, ... with no gap (appended at the count, deleted all at once), so
      // the count is one more than the last number: found in the key's index, where COUNT(*) would
      // visit every chunk of the job, once per chunk appended.
      chunkCount: p<{ n: number }>(`SELECT COALESCE(MAX(seq) + 1, 0) AS n FROM stream_chunks WHERE job_id = ?`),
      chunks: p<{ item: string }>(`SELECT item FROM stream_chunks WHERE job_id = ? AND seq >= ? ORDER BY seq`),
      endpointJobs: p(`DELETE FROM jobs WHERE endpoint_id = ?`),
    };
  }

  insert(job: Job): void {
    this.counts.changed(job.endpointId, undefined, job);
    this.behind.inserted(job);
    this.track(job);
  }

  get(id: string): Job | undefined {
    const waiting = this.behind.peek(id);
    if (waiting !== undefined) return waiting ?? undefined;
    const hit = this.recent.get(id);
    if (hit) return hit;
    for (const queues of [this.lanes.standard, this.lanes.batch]) {
      for (const q of queues.values()) {
        const queued = q.jobOf(id);
        if (queued) return queued;
      }
    }
    const held = this.behind.heldJob(id);
    if (held) {
      this.remember(held);
      return held;
    }
    const r = this.s.get.get(id);
    if (!r) return undefined;
    const job = fromArray(r, this.read);
    this.remember(job);
    return job;
  }

  save(job: Job, changed?: readonly (keyof Job)[], from?: Job): void {
    // Only the changed fields are written: a stale copy's other fields must not win, in memory
    // either. (A job deleted in this turn is written whole again, as it comes.)
    const known = changed === undefined || this.behind.peek(job.id) === null ? undefined : this.get(job.id);
    let next = job;
    if (changed !== undefined && known && known !== from) {
      const merged: Record<string, unknown> = { ...known };
      for (const f of changed) merged[f] = job[f];
      next = merged as unknown as Job;
    }
    if (this.counts.kept(job.endpointId)) this.counts.changed(job.endpointId, known ?? this.get(job.id), next);
    this.behind.saved(next, changed);
    this.track(next);
  }

  delete(id: string): void {
    const gone = this.counts.any ? this.get(id) : undefined;
    if (gone) this.counts.changed(gone.endpointId, gone, undefined);
    this.behind.deleted(id);
    this.recent.delete(id);
    for (const q of this.lanes.standard.values()) q.remove(id);
    for (const q of this.lanes.batch.values()) q.remove(id);
  }

  whenDurable(): Promise<void> | undefined {
    return this.behind.whenDurable();
  }

  stagePayload(value: RawJson): Promise<RawJson> | undefined {
    return this.parts.stage(value);
  }

  releasePayload(value: unknown): void {
    this.parts.release(value);
  }

  /**
   * Writes every change still waiting for the end of the turn (with the other stores' of the
   * database), and the rows held in memory: every read of the jobs table with SQL comes after it.
   */
  flush(): void {
    this.behind.needAll();
    this.writes.flush();
  }

  /** Drops every job kept in memory: the database changed under the store (a snapshot was restored). */
  forget(): void {
    this.counts.clear();
    this.behind.clear();
    this.parts.clear();
    this.recent.clear();
    this.lanes.standard.clear();
    this.lanes.batch.clear();
  }

  private remember(job: Job): void {
    if (heavy(job)) this.recent.delete(job.id);
    else this.recent.set(job.id, job);
  }

  /** Keeps the endpoint's queue in memory (if read yet) true after a write of `job`. */
  private track(job: Job): void {
    const q = this.lanes[laneOf(job)].get(job.endpointId);
    if (!q) return;
    if (job.status === "IN_QUEUE") q.put(job.id, job.queueSeq, job.lowPriority, heavy(job) ? undefined : job);
    else q.remove(job.id);
  }

  private queue(endpointId: string, lane: Lane): QueueIndex {
    const queues = this.lanes[lane];
    let q = queues.get(endpointId);
    if (!q) {
      this.flush();
      q = new QueueIndex();
      for (const r of this.s.queued.all(endpointId, lane === "batch" ? 1 : 0)) q.put(r.id, r.queue_seq, r.low_priority === 1);
      queues.set(endpointId, q);
    }
    return q;
  }

  nextQueued(endpointId: string, lane: Lane = "standard"): Job | undefined {
    const q = this.queue(endpointId, lane);
    for (;;) {
      const id = q.first();
      if (id === undefined) return undefined;
      const job = q.jobOf(id) ?? this.get(id);
      if (job?.status === "IN_QUEUE" && job.endpointId === endpointId) {
        // It is about to start: the transition reads it again (a job still to be written is found there).
        if (this.behind.peek(id) === undefined) this.remember(job);
        return job;
      }
      q.remove(id); // cannot happen while every write goes through this store
    }
  }

  hasQueued(endpointId: string, lane: Lane): boolean {
    return this.queue(endpointId, lane).first() !== undefined;
  }

  countScalingDemand(endpointId: string, limit: number, lane: Lane = "standard"): number {
    return Math.min(limit, this.queue(endpointId, lane).demand);
  }

  countByBatch(batchId: string): Record<JobStatus, number> {
    this.flush();
    const counts = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    for (const r of this.s.byBatch.all(batchId)) counts[r.status as JobStatus] = r.n;
    return counts;
  }

  listBatch(batchId: string, offset: number, limit: number): Job[] {
    this.flush();
    return this.s.batchPage.all(batchId, limit, offset).map((r) => fromArray(r, this.read));
  }

  batchJobIds(batchId: string): { id: string; status: JobStatus }[] {
    this.flush();
    return this.s.batchIds.all(batchId) as { id: string; status: JobStatus }[];
  }

  countByStatus(endpointId: string): Record<JobStatus, number> {
    return { ...this.endpointCounts(endpointId).byStatus };
  }

  private endpointCounts(endpointId: string) {
    return this.counts.of(endpointId, () => {
      this.flush();
      return countsOf(this.s.countByStatus.all(endpointId), this.s.sumRetries.get(endpointId)?.n);
    });
  }

  countActive(): number {
    this.flush();
    return this.s.active.get()?.n ?? 0;
  }

  sumRetries(endpointId: string): number {
    return this.endpointCounts(endpointId).retries;
  }

  purgeQueued(endpointId: string): string[] {
    this.flush();
    return this.tx(() => {
      const ids = this.s.queuedIds.all(endpointId).map((r) => r.id);
      this.s.purge.run(endpointId);
      this.counts.drop(endpointId);
      for (const id of ids) this.recent.delete(id);
      this.lanes.standard.delete(endpointId);
      return ids;
    });
  }

  due(now: number, limit: number): { jobs: Job[]; next: number | undefined } {
    // What this turn changed is written; the rows held stay held: a job whose deadline has come is
    // read from memory (a job whose retention ends before its row was written is never written).
    this.writes.flush();
    const n = Math.max(1, Math.floor(limit));
    return this.dueReader.dueAll(now, n, this.behind.heldDue(now, n), (id) => this.get(id), (job) => this.remember(job));
  }

  nextDeadline(): number | undefined {
    this.flush();
    return this.s.nextDeadline.get()?.at ?? undefined;
  }

  list(filter: JobFilter): { jobs: JobSummary[]; total: number } {
    this.flush();
    const where = { endpoint: filter.endpointId ?? null, status: filter.status ?? null, id: filter.idContains ?? null };
    return this.tx(() => ({
      jobs: this.s.list.all({ ...where, limit: filter.limit, offset: filter.offset }).map((r) => {
        const { input: _i, output: _o, error: _e, s3Config: _s, ...summary } = fromRow(r);
        return summary;
      }),
      total: this.s.listCount.get(where)?.n ?? 0,
    }));
  }

  listByStatus(status: JobStatus): Job[] {
    this.flush();
    return this.s.byStatus.all(status).map((r) => fromArray(r, this.read));
  }

  maxQueueSeq(): number {
    this.flush();
    return this.s.maxSeq.get()?.n ?? 0;
  }

  appendChunks(jobId: string, items: StreamItem[]): void {
    this.flush(); // the job's row first: chunks reference it
    this.tx(() => {
      let seq = this.chunkCount(jobId);
      for (const item of items) this.s.addChunk.run(jobId, seq++, JSON.stringify(item));
    });
  }

  chunkCount(jobId: string): number {
    this.flush();
    return this.s.chunkCount.get(jobId)?.n ?? 0;
  }

  chunks(jobId: string, from: number): StreamItem[] {
    this.flush();
    return this.s.chunks.all(jobId, from).map((r) => JSON.parse(r.item) as StreamItem);
  }

  clearChunks(jobId: string): void {
    this.flush();
    this.s.deleteChunks.run(jobId);
  }

  deleteEndpointJobs(endpointId: string): void {
    this.flush();
    this.counts.drop(endpointId);
    this.recent.clear();
    this.lanes.standard.delete(endpointId);
    this.lanes.batch.delete(endpointId);
    this.s.endpointJobs.run(endpointId); // with their stream chunks (trigger jobs_delete_chunks)
  }

  deleteAll(): void {
    this.forget();
    this.db.exec("DELETE FROM stream_chunks; DELETE FROM payload_parts; DELETE FROM jobs;");
  }

  /** A statement returning rows as arrays in COLUMNS order (checked here, once). */
  private rawRows(sql: string): Statement<unknown[], unknown[]> {
    const st = this.db.prepare<unknown[], unknown[]>(sql).raw(true);
    const names = st.columns().map((c) => c.name).join(", ");
    if (names !== COLUMNS) throw new Error(`job-store: ${sql} reads columns "${names}", expected "${COLUMNS}"`);
    return st;
  }

  /** Runs `fn` and writes what it changed, in one transaction (the rows held stay held). */
  tx<T>(fn: () => T): T {
    return this.inTx(() => {
      const result = fn();
      this.writes.flush();
      return result;
    }) as T;
  }
}
