import type { Statement } from "better-sqlite3";
import type { Job } from "../domain/job.js";
import type { Db } from "./db.js";
import { COLUMNS, PARAMS, UPDATES, type JobColumns } from "./job-rows.js";
import { heavy } from "./job-weight.js";
import { HeldJobs, type Holding } from "./held-jobs.js";
import { RowInserter } from "./row-inserter.js";
import type { WriteBehind } from "./write-behind.js";

export type { Holding };

/** A write waiting for the end of the turn: the job as it will be written, or its deletion. */
type PendingWrite =
  /** A job that is not in the database yet: one INSERT of the whole row (`held`: a row held in memory changed). */
  | { op: "insert"; job: Job; held?: true }
  /** A row that is there: an UPDATE of the fields changed since it was written. */
  | { op: "update"; job: Job; fields: Array<keyof Job> }
  /** The whole row, whether it is there or not (it may have been deleted meanwhile). */
  | { op: "upsert"; job: Job }
  | { op: "delete" };

/**
 * The job writes of the current turn, one per job: each new write of a job folds into the one
 * waiting (an insert then two updates stay one INSERT of the last state; an insert then a delete
 * never reaches the database). `WriteBehind` writes them at the end of the turn, in its
 * transaction; `whenDurable()` settles once they are committed.
 */
export class JobWrites {
  /** By job id, in the order jobs were first written. */
  private pending = new Map<string, PendingWrite>();
  /**
   * With `holding` (a database in memory): the jobs not in the database yet (held-jobs.ts). A
   * job's first write lands there at the end of its turn instead of in SQLite; it is written when a
   * reader asks (`needAll`), past the bound, when the emulator is idle, or never (its retention
   * ended first). A row held is never also in the database: a job changed again leaves it for a
   * pending write of its whole row.
   */
  private readonly held = new HeldJobs();
  /** The flush under way writes the rows held: a reader asked, a snapshot, an export. */
  private writeHeld = false;
  /**
   * The emulator is idle (`Holding.idleMs`): each end of a turn writes the oldest generation of
   * rows held (held-rows.ts) until none is left or a job is written. A few milliseconds of SQLite a
   * turn, so a request arriving meanwhile waits no longer than that, however many rows a burst of
   * jobs left held.
   */
  private draining = false;
  /** The held rows being written, and the jobs of the turn among them, until committed (restored if it fails). */
  private writing: { rows: Job[]; turn: ReadonlyMap<string, PendingWrite> } | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  /** A job was written since the idle timer was armed. */
  private active = false;
  private readonly heldInserts: RowInserter<Job>;
  /** Written into a transaction that is not known to be committed yet. */
  private unconfirmed = false;
  /** Settled when what was written so far is committed; made only when someone asks. */
  private durable: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined;
  /** `UPDATE` statements by the fields they write (a transition changes a few columns of 25). */
  private readonly updates = new Map<string, { statement: Statement<unknown[]>; writes: Array<(j: Job) => unknown> }>();
  private readonly inserts: RowInserter<Job>;
  private readonly s;

  /**
   * @param onFailed told when a turn's writes were rolled back (a full disk): what memory holds of them is no longer true.
   * @param onWritten told of each job as its row is written (whole or in part), in its last state;
   *   of held rows written together, only of the newest `toldMax` (the store keeps no more at hand)
   */
  constructor(
    private readonly db: Db,
    private readonly writes: WriteBehind,
    private readonly columns: JobColumns,
    private readonly onFailed: () => void = () => {},
    private readonly onWritten: (job: Job) => void = () => {},
    private readonly holding?: Holding,
    private readonly toldMax = Infinity,
  ) {
    // Positional parameters: binding 25 named ones from an object costs more than the write.
    this.inserts = new RowInserter(db, "jobs", COLUMNS, columns.fill, 8);
    this.heldInserts = new RowInserter(db, "jobs", COLUMNS, columns.fill, 32);
    this.s = {
      // An upsert changes the row in place: only the indexes whose columns changed are touched,
      // where INSERT OR REPLACE deletes and re-inserts the row in every index.
      upsert: db.prepare<unknown[]>(`INSERT INTO jobs (${COLUMNS}) VALUES (${PARAMS}) ON CONFLICT (id) DO UPDATE SET ${UPDATES}`),
      delete: db.prepare<[string]>(`DELETE FROM jobs WHERE id = ?`),
    };
    writes.add({
      pending: (all) => {
        if (all) this.needAll();
        // A turn that only added jobs, within the bound, nobody waiting: their rows join those held
        // here, and the turn opens no transaction for them.
        if (this.holding && this.pending.size > 0 && !this.unconfirmed && !this.writeHeld && this.onlyInserts()) {
          this.holdTurn();
          if (!this.held.overBound(this.holding)) {
            // The answers that waited for the end of the turn leave now, together.
            this.settle(undefined);
            return false;
          }
        }
        return this.pending.size > 0 || this.heldToWrite() > 0;
      },
      write: () => this.writeAll(),
      committed: () => {
        this.writing = undefined;
        this.settle(undefined);
      },
      failed: (e) => {
        this.restoreHeld();
        this.onFailed();
        this.settle(e);
      },
    });
  }

  /** The job as it will be written; null when it is to be deleted; undefined when nothing waits. */
  peek(id: string): Job | null | undefined {
    const w = this.pending.get(id);
    return w === undefined ? undefined : w.op === "delete" ? null : w.job;
  }

  /** The job of a row held; undefined when it has none. */
  heldJob(id: string): Job | undefined {
    return this.held.get(id);
  }

  /** The next flush writes the rows held too (a reader of the jobs table with SQL is about to read). */
  needAll(): void {
    if (this.held.size > 0 || this.pending.size > 0) this.writeHeld = true;
  }

  /**
   * At most `n` held rows whose deadline has come, earliest first, and the least deadline of the
   * others (Infinity when none; `now` when more are due than it gives): the deadline timer reads
   * them without writing them, so a job whose retention ends before its row was written is never
   * written.
   */
  heldDue(now: number, n: number): { ids: string[]; next: number } {
    return this.held.due(now, n);
  }

  /** A new job, by an id no job has (as the table's primary key requires): none of its rows is held. */
  inserted(job: Job): void {
    // A row deleted earlier in this turn is still in the database until the turn's end.
    this.later(job.id, this.pending.get(job.id)?.op === "delete" ? { op: "upsert", job } : { op: "insert", job });
  }

  /** `job` as it now is; `changed` the fields that differ from the row (all when undefined). */
  saved(job: Job, changed: readonly (keyof Job)[] | undefined): void {
    const before = this.pending.get(job.id);
    // Held, never written: its whole row is written (or held) again, in its new state, keeping its
    // place among the rows held (they are written in the order they came: a batch's rows are listed so).
    if (before === undefined && this.held.get(job.id) !== undefined) return this.later(job.id, { op: "insert", job, held: true });
    // Still to be inserted (a job started and finished in the turn it came): its last state is the row.
    if (before?.op === "insert") {
      before.job = job;
      return this.writes.schedule();
    }
    if (changed === undefined || before?.op === "upsert" || before?.op === "delete") return this.later(job.id, { op: "upsert", job });
    // Our own array: the caller's may be a constant, and a later write of the job adds to it.
    const fields = before?.op === "update" ? before.fields : [];
    for (const f of changed) if (!fields.includes(f)) fields.push(f);
    this.later(job.id, { op: "update", job, fields });
  }

  deleted(id: string): void {
    // A job inserted in this turn never reaches the database.
    if (this.pending.get(id)?.op === "insert") {
      this.pending.delete(id);
      this.held.drop(id);
    } else if (!this.held.drop(id)) this.later(id, { op: "delete" });
  }

  /**
   * Settles once every write made so far is committed (at the end of a turn that only added jobs
   * whose rows are held, once they are); undefined when none waits. A failed commit rejects it.
   * Answering before the end of the turn cost more than it saved: the answers of a turn leave
   * together (bench/RESULTS-pipeline.md).
   */
  whenDurable(): Promise<void> | undefined {
    if (this.pending.size === 0 && !this.unconfirmed) return undefined;
    if (!this.durable) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<void>((ok, fail) => {
        resolve = ok;
        reject = fail;
      });
      this.durable = { promise, resolve, reject };
    }
    return this.durable.promise;
  }

  /** Drops what waits: the database was replaced under the store (a snapshot restored, a reset). */
  clear(): void {
    this.pending.clear();
    this.held.clear();
    this.draining = false;
    this.writing = undefined;
    this.settle(undefined);
  }

  /** Every write waiting is a new job's row that may be held (a heavy job's is written, its payloads out of the heap). */
  private onlyInserts(): boolean {
    for (const w of this.pending.values()) if (w.op !== "insert" || heavy(w.job)) return false;
    return true;
  }

  /** How many of the rows held the end of this turn writes, oldest first (see `HeldJobs.toWrite`). */
  private heldToWrite(): number {
    return this.holding ? this.held.toWrite(this.holding, this.writeHeld, this.draining) : 0;
  }

  private later(id: string, write: PendingWrite): void {
    this.pending.set(id, write);
    this.active = true;
    // Jobs come again: the idle timer, armed again, says when to go on writing the rows held.
    this.draining = false;
    this.writes.schedule();
  }

  /** Holds the rows of the turn's new jobs (every write waiting is an insert). */
  private holdTurn(): void {
    const writes = this.pending;
    this.pending = new Map();
    // A new job is not told yet: it is found among the rows held (`heldJob`), and told once its
    // row is written. One held again in a new state is told now: the store may keep it at hand.
    for (const w of writes.values()) if (w.op === "insert" && this.held.hold(w)) this.onWritten(w.job);
    this.held.compact();
    this.armIdle();
  }

  private writeAll(): void {
    const writes = this.pending;
    this.pending = new Map();
    let wrote = false;
    // New jobs go in together, several to a statement; each write concerns another job, so the
    // order between the new jobs and the other writes does not matter.
    const inserts: Job[] = [];
    const told: Job[] = [];
    for (const [id, w] of writes) {
      if (w.op !== "insert") {
        this.write(id, w);
        if (w.op !== "delete") told.push(w.job);
        wrote = true;
      } else if (this.holding && !heavy(w.job)) {
        if (this.held.hold(w)) told.push(w.job);
      } else {
        // Not held (a file database, or a job whose payloads weigh over JOB_KEPT_BYTES_MAX: they
        // are not kept in the heap); one held before leaves the rows held for its whole row.
        if (w.held) this.held.drop(id);
        inserts.push(w.job);
        told.push(w.job);
      }
    }
    if (inserts.length > 0) {
      this.inserts.insert(inserts);
      wrote = true;
    }
    const count = this.heldToWrite();
    if (count > 0) {
      this.writeOldest(count, writes);
      wrote = true;
    }
    this.writeHeld = false;
    if (wrote) this.unconfirmed = true;
    for (const job of told) this.onWritten(job);
    this.held.compact();
    if (this.held.size === 0) this.draining = false;
    else if (this.draining) this.writes.schedule(); // the next slice at the end of the next turn
    else this.armIdle();
  }

  /** Writes the `count` oldest rows held, several to a statement. */
  private writeOldest(count: number, turn: ReadonlyMap<string, PendingWrite>): void {
    const all = this.held.takeOldest(count);
    this.writing = { rows: all, turn };
    this.heldInserts.insert(all);
    // The newest are told (the store keeps them at hand), and only when no newer row stays held:
    // the oldest rows, written to make room, are read from SQLite if ever asked for.
    if (this.held.size === 0) for (let i = Math.max(0, all.length - this.toldMax); i < all.length; i++) this.onWritten(all[i]!);
  }

  /**
   * The held rows a failed commit rolled back are held again (their jobs were acknowledged), but
   * for those of the failed turn itself when its answers waited for it (they are refused: their
   * jobs must neither show nor run).
   */
  private restoreHeld(): void {
    const w = this.writing;
    this.writing = undefined;
    if (!w) return;
    const refused = this.durable !== undefined;
    for (const job of w.rows) {
      const id = job.id;
      if (this.held.get(id) !== undefined || this.pending.has(id) || (refused && w.turn.has(id))) continue;
      this.held.hold({ job, held: true });
    }
  }

  /**
   * Writes the held rows once the emulator is idle: a timer that finds jobs written since it was
   * armed looks again later; one that finds none starts writing them, a generation a turn.
   */
  private armIdle(): void {
    if (this.idleTimer !== undefined) return;
    this.active = false;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.held.size === 0) return;
      if (this.active) return this.armIdle();
      this.draining = true;
      this.writes.schedule();
    }, this.holding?.idleMs);
    this.idleTimer.unref();
  }

  private settle(error: unknown): void {
    const durable = this.durable;
    this.durable = undefined;
    this.unconfirmed = false;
    if (error === undefined) durable?.resolve();
    else durable?.reject(error);
  }

  private write(id: string, w: Exclude<PendingWrite, { op: "insert" }>): void {
    switch (w.op) {
      case "upsert":
        this.s.upsert.run(this.columns.values(w.job));
        return;
      case "delete":
        this.s.delete.run(id); // its stream chunks go too (trigger jobs_delete_chunks)
        return;
      case "update": {
        const st = this.updateOf(w.fields);
        const args = new Array<unknown>(st.writes.length);
        for (let i = 0; i < args.length; i++) args[i] = st.writes[i]!(w.job);
        // A row deleted meanwhile (purged, expired) is written whole again, as before.
        if (st.statement.run(args).changes === 0) this.s.upsert.run(this.columns.values(w.job));
      }
    }
  }

  /** The `UPDATE` of a set of fields, prepared once per set. */
  private updateOf(changed: ReadonlyArray<keyof Job>): { statement: Statement<unknown[]>; writes: Array<(j: Job) => unknown> } {
    const key = changed.join(",");
    let st = this.updates.get(key);
    if (!st) {
      const fields = [...new Set(changed)].flatMap((f) => this.columns.WRITE_OF.get(f) ?? []);
      const sets = [...fields.map((f) => `${f.column} = ?`), "deadline_at = ?"].join(", ");
      st = { statement: this.db.prepare(`UPDATE jobs SET ${sets} WHERE id = ?`), writes: [...fields.map((f) => f.write), this.columns.DEADLINE_WRITE, (j: Job) => j.id] };
      this.updates.set(key, st);
    }
    return st;
  }
}
