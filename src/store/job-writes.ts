import type { Statement } from "better-sqlite3";
import type { Job } from "../domain/job.js";
import type { Db } from "./db.js";
import { COLUMNS, PARAMS, UPDATES, type JobColumns } from "./job-rows.js";
import { RowInserter } from "./row-inserter.js";
import type { WriteBehind } from "./write-behind.js";

/** A write waiting for the end of the turn: the job as it will be written, or its deletion. */
type PendingWrite =
  /** A job that is not in the database yet: one INSERT of the whole row. */
  | { op: "insert"; job: Job }
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
   * @param onWritten told of each job as its row is written (whole or in part), in its last state
   */
  constructor(
    private readonly db: Db,
    private readonly writes: WriteBehind,
    private readonly columns: JobColumns,
    private readonly onFailed: () => void = () => {},
    private readonly onWritten: (job: Job) => void = () => {},
  ) {
    // Positional parameters: binding 25 named ones from an object costs more than the write.
    this.inserts = new RowInserter(db, "jobs", COLUMNS, columns.fill, 8);
    this.s = {
      // An upsert changes the row in place: only the indexes whose columns changed are touched,
      // where INSERT OR REPLACE deletes and re-inserts the row in every index.
      upsert: db.prepare<unknown[]>(`INSERT INTO jobs (${COLUMNS}) VALUES (${PARAMS}) ON CONFLICT (id) DO UPDATE SET ${UPDATES}`),
      delete: db.prepare<[string]>(`DELETE FROM jobs WHERE id = ?`),
    };
    writes.add({
      pending: () => this.pending.size > 0,
      write: () => this.writeAll(),
      committed: () => this.settle(undefined),
      failed: (e) => {
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

  inserted(job: Job): void {
    // A row deleted earlier in this turn is still in the database until the turn's end.
    this.later(job.id, this.pending.get(job.id)?.op === "delete" ? { op: "upsert", job } : { op: "insert", job });
  }

  /** `job` as it now is; `changed` the fields that differ from the row (all when undefined). */
  saved(job: Job, changed: readonly (keyof Job)[] | undefined): void {
    const before = this.pending.get(job.id);
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
    if (this.pending.get(id)?.op === "insert") this.pending.delete(id);
    else this.later(id, { op: "delete" });
  }

  /** Settles once every write made so far is committed; undefined when none waits. A failed commit rejects it. */
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
    this.settle(undefined);
  }

  private later(id: string, write: PendingWrite): void {
    this.pending.set(id, write);
    this.writes.schedule();
  }

  private writeAll(): void {
    const writes = this.pending;
    this.pending = new Map();
    this.unconfirmed = true;
    // New jobs go in together, several to a statement; each write concerns another job, so the
    // order between the new jobs and the other writes does not matter.
    const inserts: Job[] = [];
    for (const [id, w] of writes) {
      if (w.op === "insert") inserts.push(w.job);
      else this.write(id, w);
    }
    this.inserts.insert(inserts);
    for (const w of writes.values()) if (w.op !== "delete") this.onWritten(w.job);
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
