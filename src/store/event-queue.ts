import { JOB_STATUSES, type JobStatus } from "../domain/job.js";
import type { JobEvent } from "../domain/observability.js";
import { ColumnRing } from "./column-ring.js";

/** One event in a timeline row: [at, from, to, cause]. */
export type StoredEvent = [number, JobStatus | null, JobStatus | null, string];
/** A timeline row: a job's events written together. */
export interface TimelineRow {
  jobId: string;
  endpointId: string;
  events: StoredEvent[];
}

/** A status as a small number (0: none). */
const CODE = new Map<JobStatus, number>(JOB_STATUSES.map((s, i) => [s, i + 1]));
const code = (s: JobStatus | undefined) => (s === undefined ? 0 : CODE.get(s)!);
const status = (c: number) => (c === 0 ? undefined : JOB_STATUSES[c - 1]);

/**
 * Timeline events not written yet, oldest first, column by column (see `ColumnRing`). In a
 * database in memory they wait here until a timeline is needed in SQLite (a snapshot, an export),
 * so under load the events of tens of thousands of jobs live for seconds.
 */
export class EventQueue extends ColumnRing {
  private jobId: string[] = new Array<string>(this.capacity);
  private endpointId: string[] = new Array<string>(this.capacity);
  private cause: string[] = new Array<string>(this.capacity);
  private at = new Float64Array(this.capacity);
  private from = new Uint8Array(this.capacity);
  private to = new Uint8Array(this.capacity);

  push(e: JobEvent): void {
    const i = this.nextSlot();
    this.jobId[i] = e.jobId;
    this.endpointId[i] = e.endpointId;
    this.cause[i] = e.cause;
    this.at[i] = e.at;
    this.from[i] = code(e.from);
    this.to[i] = code(e.to);
  }

  /** The events of one job, oldest first (a scan: reads of one timeline are rare). */
  ofJob(jobId: string): JobEvent[] {
    const out: JobEvent[] = [];
    for (let k = 0; k < this.length; k++) {
      const i = this.slot(k);
      if (this.jobId[i] === jobId) out.push(this.event(i));
    }
    return out;
  }

  /**
   * Every event as timeline rows, one per job in the order jobs first appear, each job's events
   * in order; the queue is empty afterwards.
   */
  takeRows(): TimelineRow[] {
    const rows = new Map<string, TimelineRow>();
    for (let k = 0; k < this.length; k++) {
      const i = this.slot(k);
      const id = this.jobId[i]!;
      const stored: StoredEvent = [this.at[i]!, status(this.from[i]!) ?? null, status(this.to[i]!) ?? null, this.cause[i]!];
      const row = rows.get(id);
      if (row) row.events.push(stored);
      else rows.set(id, { jobId: id, endpointId: this.endpointId[i]!, events: [stored] });
    }
    this.clear();
    return [...rows.values()];
  }

  private event(i: number): JobEvent {
    return { jobId: this.jobId[i]!, endpointId: this.endpointId[i]!, at: this.at[i]!, from: status(this.from[i]!), to: status(this.to[i]!), cause: this.cause[i]! };
  }

  protected release(i: number): void {
    this.jobId[i] = "";
    this.endpointId[i] = "";
    this.cause[i] = "";
  }

  protected resize(order: (k: number) => number, size: number): void {
    this.jobId = this.strings(this.jobId, order, size);
    this.endpointId = this.strings(this.endpointId, order, size);
    this.cause = this.strings(this.cause, order, size);
    this.at = this.numbers(this.at, order, size);
    this.from = this.numbers(this.from, order, size);
    this.to = this.numbers(this.to, order, size);
  }
}
