import type { Job } from "../domain/job.js";
import { nextDeadline } from "../domain/job.js";
import { DeadlineHeap } from "./deadline-heap.js";
import { HeldRows } from "./held-rows.js";
import { payloadBytes } from "./job-weight.js";

/**
 * How many rows of jobs never written may wait in memory, and their bytes (`memory.heldJobRows`,
 * `memory.heldJobBytes`): past either, the end of the turn writes the oldest.
 */
export interface Holding {
  rows: number;
  bytes: number;
  /** Real ms without a job write after which the rows held are written (the emulator is idle): `memory.heldJobIdleMs`. */
  idleMs: number;
}

/** The bytes a held job takes, about: its payloads, and its fields (a small job measured about 570 bytes of heap). */
const rowBytes = (job: Job): number => 512 + payloadBytes(job);

/** Past a bound, the oldest rows are written until this much is left under it (of rows, of bytes), a sixteenth of the bound at most. */
const TRIM_ROWS = 2_048;
const TRIM_BYTES = 1024 * 1024;

/**
 * The jobs of a database in memory whose rows are not written yet (job-writes.ts), each the job
 * object the store keeps at hand anyway (jobs are changed by copying, never in place): a copy of
 * its row's values made each job's texts outlive the young generation, which cost more CPU and
 * memory than the row's INSERT it put off (bench/RESULTS-pipeline.md). By id, in the order they
 * came (held-rows.ts), with their bytes and their deadlines (deadline-heap.ts): the deadline timer
 * reads the due ones here, so a job whose retention ends before its row was written never is.
 */
export class HeldJobs {
  private readonly rows = new HeldRows();
  private bytes = 0;
  /** The deadlines of the rows held (entries of rows that left or changed are dropped as met). */
  private readonly deadlines = new DeadlineHeap();
  /** No more than the least deadline of the rows held (it may be lower: then the deadline timer looks early). */
  private least = Infinity;

  get size(): number {
    return this.rows.size;
  }

  get(id: string): Job | undefined {
    return this.rows.get(id);
  }

  /**
   * Holds a job's row (a new job's, or one held before that changed: `w.held`); whether it held one
   * of the job before. A new job's id is looked up nowhere: each look-up in a large map costs a few
   * cache misses.
   */
  hold(w: { job: Job; held?: true }): boolean {
    const job = w.job;
    if (w.held) {
      // A job held again in its new state keeps its place.
      const before = this.rows.replace(job);
      if (before !== undefined) this.bytes -= rowBytes(before);
    } else this.rows.add(job);
    this.bytes += rowBytes(job);
    const at = nextDeadline(job);
    this.deadlines.add(job.id, at);
    if (at < this.least) this.least = at;
    return w.held === true;
  }

  /** Forgets a held row; whether there was one. */
  drop(id: string): boolean {
    const job = this.rows.delete(id);
    if (job === undefined) return false;
    this.bytes -= rowBytes(job);
    return true;
  }

  /**
   * At most `n` held rows whose deadline has come, earliest first, and the least deadline of the
   * others (Infinity when none; `now` when more are due than it gives): each batch of the deadline
   * timer costs its own rows, not a scan of every row held.
   */
  due(now: number, n: number): { ids: string[]; next: number } {
    if (this.least > now) return { ids: [], next: this.least };
    const due = this.deadlines.due(now, n, this.isDeadline);
    // Given the first due entries, the least deadline is theirs or the one after them.
    this.least = due.ids.length > 0 ? now : due.next;
    return due;
  }

  overBound(h: Holding): boolean {
    return this.rows.size > h.rows || this.bytes > h.bytes;
  }

  /**
   * How many of the rows held the end of a turn writes, oldest first: all of them when a reader
   * asked (`all`); past a bound, enough to leave a sixteenth of it free (at most `TRIM_ROWS`,
   * `TRIM_BYTES`); while the emulator is idle (`draining`), the oldest generation.
   */
  toWrite(h: Holding, all: boolean, draining: boolean): number {
    const size = this.rows.size;
    if (size === 0) return 0;
    if (all) return size;
    if (!this.overBound(h)) return draining ? this.rows.oldestSize() : 0;
    const rows = Math.max(0, size - (h.rows - Math.min(TRIM_ROWS, Math.ceil(h.rows / 16))));
    let bytes = this.bytes - (h.bytes - Math.min(TRIM_BYTES, Math.ceil(h.bytes / 16)));
    if (bytes <= 0 || rows >= size) return Math.max(1, rows);
    // Over the bytes: the oldest until enough bytes are written.
    let n = 0;
    for (const job of this.rows.values()) {
      n++;
      bytes -= rowBytes(job);
      if (bytes <= 0) break;
    }
    return Math.max(n, rows);
  }

  /** Takes the `n` oldest rows out, in the order they came. */
  takeOldest(n: number): Job[] {
    const jobs = this.rows.takeOldest(n);
    if (this.rows.size === 0) this.clear();
    else for (const job of jobs) this.bytes -= rowBytes(job);
    return jobs;
  }

  /** Once the deadline entries outnumber the rows held twice over, the stale ones go. */
  compact(): void {
    if (this.deadlines.size > 2 * this.rows.size + 4_096) this.deadlines.compact(this.isDeadline);
  }

  clear(): void {
    this.rows.clear();
    this.deadlines.clear();
    this.bytes = 0;
    this.least = Infinity;
  }

  /** Whether a deadline entry is still its held job's. */
  private readonly isDeadline = (id: string, at: number): boolean => {
    const job = this.rows.get(id);
    return job !== undefined && nextDeadline(job) === at;
  };
}
