import type { Statement } from "better-sqlite3";
import type { Job } from "../domain/job.js";
import type { Db } from "./db.js";
import { nextDeadline } from "../domain/job.js";
import { COLUMNS, PARAMS, UPDATES, type JobColumns } from "./job-rows.js";
import { payloadBytes } from "./job-weight.js";
import { DeadlineRuns } from "./deadline-runs.js";
import { HeldRows } from "./held-rows.js";
import { RowInserter } from "./row-inserter.js";
import type { WriteBehind } from "./write-behind.js";

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
 * How many rows of jobs never written may wait in memory, and their bytes (`memory.heldJobRows`,
 * `memory.heldJobBytes`): past either, the end of the turn writes them all.
 */
export interface Holding {
  rows: number;
  bytes: number;
  /** Real ms without a job write after which the rows held are written (the emulator is idle): `memory.heldJobIdleMs`. */
  idleMs: number;
}

/** The bytes a held job takes, about: its payloads, and its fields. */
const rowBytes = (job: Job): number => 512 + payloadBytes(job);

/** Past a bound, the oldest rows are written until this much is left under it (of rows, of bytes), a sixteenth of the bound at most. */
const TRIM_ROWS = 2_048;
const TRIM_BYTES = 1024 * 1024;

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
   * With `holding` (a database in memory): the jobs not in the database yet, by id, each the job
   * object the store keeps at hand anyway (jobs are changed by copying, never in place): a copy of
   * its row's values made each job's texts outlive the young generation, which cost more CPU and
   * memory than the row's INSERT it put off (bench/RESULTS-pipeline.md). A job's first write lands here at
   * the end of its turn instead of in SQLite; it is written when a reader asks (`needAll`), past
   * the bound, when the emulator is idle, or never (its retention ended first). A row held is never
   * also in the database: a job changed again leaves it for a pending write of its whole row.
   */
  private readonly held = new HeldRows();
  private heldBytes = 0;
  /** The deadlines of the rows held (entries of rows that left or changed are dropped as met). */
  private readonly heldDeadlines = new DeadlineRuns();
  /** No more than the least deadline of the rows held (it may be lower: then the deadline timer looks early). */
  private heldMin = Infinity;
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
          if (!this.overBound(this.holding)) {
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
   * At most `n` held rows whose deadline has come, and the least deadline of the others (Infinity
   * when none; `now` when more are due than it gives): the deadline timer reads them without
   * writing them, so a job whose retention ends before its row was written is never written. A
   * scan stops at the `n`th due row, so a day of retention ending at once costs each batch of the
   * timer its own rows, not a scan of every row held.
   */
  heldDue(now: number, n: number): { ids: string[]; next: number } {
    if (this.heldMin > now) return { ids: [], next: this.heldMin };
    const due = this.heldDeadlines.due(now, n, this.isHeldDeadline);
    // Given the first due entries, the least deadline is theirs or the one after them.
    this.heldMin = due.ids.length > 0 ? now : due.next;
    return due;
  }

  /** Whether a deadline entry is still its held job's. */
  private readonly isHeldDeadline = (id: string, at: number): boolean => {
    const job = this.held.get(id);
    return job !== undefined && nextDeadline(job) === at;
  };

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
      this.dropHeld(id);
    } else if (!this.dropHeld(id)) this.later(id, { op: "delete" });
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
    this.heldDeadlines.clear();
    this.draining = false;
    this.heldBytes = 0;
    this.heldMin = Infinity;
    this.writing = undefined;
    this.settle(undefined);
  }

  private onlyInserts(): boolean {
    for (const w of this.pending.values()) if (w.op !== "insert") return false;
    return true;
  }

  private overBound(holding: Holding): boolean {
    return this.held.size > holding.rows || this.heldBytes > holding.bytes;
  }

  /**
   * How many of the rows held the end of this turn writes, oldest first: all of them when a
   * reader asked; past a bound, enough to leave a margin under it; while idle, a slice.
   */
  private heldToWrite(): number {
    const h = this.holding;
    if (!h || this.held.size === 0) return 0;
    if (this.writeHeld) return this.held.size;
    if (this.overBound(h)) {
      const rows = Math.max(0, this.held.size - (h.rows - Math.min(TRIM_ROWS, Math.ceil(h.rows / 16))));
      if (this.heldBytes <= h.bytes - Math.min(TRIM_BYTES, Math.ceil(h.bytes / 16)) || rows >= this.held.size) return Math.max(1, rows);
      // Over the bytes: the oldest until enough bytes are written.
      let bytes = this.heldBytes - (h.bytes - Math.min(TRIM_BYTES, Math.ceil(h.bytes / 16)));
      let n = 0;
      for (const job of this.held.values()) {
        n++;
        bytes -= rowBytes(job);
        if (bytes <= 0) break;
      }
      return Math.max(n, rows);
    }
    return this.draining ? this.held.oldestSize() : 0;
  }

  private later(id: string, write: PendingWrite): void {
    this.pending.set(id, write);
    this.active = true;
    // Jobs come again: the idle timer, armed again, says when to go on writing the rows held.
    this.draining = false;
    this.writes.schedule();
  }

  /** Forgets a held row; whether there was one. */
  private dropHeld(id: string): boolean {
    const job = this.held.delete(id);
    if (job === undefined) return false;
    this.heldBytes -= rowBytes(job);
    return true;
  }

  /**
   * Holds a job's row (a new job's, or one held before that changed: `w.held`); whether it held one
   * of the job before (then the job was changed: see `holdTurn`). A new job's id is looked up in
   * none of the maps: the held rows' is large, and each look-up there costs a few cache misses.
   */
  private hold(w: { job: Job; held?: true }): boolean {
    const job = w.job;
    if (w.held) {
      // A job held again in its new state keeps its place.
      const before = this.held.replace(job);
      if (before !== undefined) this.heldBytes -= rowBytes(before);
    } else this.held.add(job);
    this.heldBytes += rowBytes(job);
    const at = nextDeadline(job);
    this.heldDeadlines.add(job.id, at);
    if (at < this.heldMin) this.heldMin = at;
    return w.held === true;
  }

  /** Holds the rows of the turn's new jobs (every write waiting is an insert). */
  private holdTurn(): void {
    const writes = this.pending;
    this.pending = new Map();
    // A new job is not told yet: it is found among the rows held (`heldJob`), and told once its
    // row is written. One held again in a new state is told now: the store may keep it at hand.
    for (const w of writes.values()) if (w.op === "insert" && this.hold(w)) this.onWritten(w.job);
    this.compactDeadlines();
    this.armIdle();
  }

  /** Once the deadline entries outnumber the rows held twice over, the stale ones go. */
  private compactDeadlines(): void {
    if (this.heldDeadlines.size > 2 * this.held.size + 4_096) this.heldDeadlines.compact(this.isHeldDeadline);
  }

  private writeAll(): void {
    const writes = this.pending;
    this.pending = new Map();
    let wrote = false;
    // New jobs go in together, several to a statement; each write concerns another job, so the
    // order between the new jobs and the other writes does not matter.
    const inserts: Job[] = [];
    for (const [id, w] of writes) {
      if (w.op !== "insert") {
        this.write(id, w);
        wrote = true;
      } else if (this.holding) {
        if (this.hold(w)) this.onWritten(w.job);
      } else inserts.push(w.job);
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
    for (const w of writes.values()) if (w.op === "update" || w.op === "upsert" || (w.op === "insert" && !this.holding)) this.onWritten(w.job);
    this.compactDeadlines();
    if (this.held.size === 0) this.draining = false;
    else if (this.draining) this.writes.schedule(); // the next slice at the end of the next turn
    else this.armIdle();
  }

  /** Writes the `count` oldest rows held, several to a statement. */
  private writeOldest(count: number, turn: ReadonlyMap<string, PendingWrite>): void {
    const all = this.held.takeOldest(count);
    if (this.held.size === 0) {
      this.heldBytes = 0;
      this.heldMin = Infinity;
      this.heldDeadlines.clear();
    } else for (const job of all) this.heldBytes -= rowBytes(job);
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
      this.hold({ job, held: true });
    }
  }

  /**
   * Writes the held rows once the emulator is idle: a timer that finds jobs written since it was
   * armed looks again later; one that finds none asks for a flush of them all.
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
