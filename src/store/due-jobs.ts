import type { Statement } from "better-sqlite3";
import type { Job } from "../domain/job.js";
import type { Db } from "./db.js";
import { COLUMNS, DEADLINE_AT, fromArray, type PayloadRead } from "./job-rows.js";

/** Payload bytes of the due jobs read whole at once (at least one job is read). */
const DUE_BYTES_MAX = 32 * 1024 * 1024;

/**
 * The jobs whose deadline has come, for the deadline timer, in deadline order: ids and payload
 * sizes first (from the rows' headers: their payloads are not read), then the due rows whole, up
 * to DUE_BYTES_MAX of payloads. A day of retention ending at once over 10 MB jobs is read a
 * bounded part at a time, not hundreds of them into the heap together (500 due jobs of 1 MB inputs
 * and outputs ran a 384 MB heap out of memory).
 *
 * Limits are written into the SQL, one statement per limit: bound as a parameter, the query ran
 * ~3x slower, and the timer runs it at every firing. One row more than the limit and no `<= now`
 * filter: the row after the due ones says when the timer fires next, without a second query.
 */
export class DueJobs {
  private readonly sized = new Map<number, Statement<[], unknown[]>>();
  private readonly whole = new Map<number, Statement<[], unknown[]>>();

  constructor(
    private readonly db: Db,
    /** A statement returning rows as arrays in COLUMNS order. */
    private readonly rawRows: (sql: string) => Statement<unknown[], unknown[]>,
    private readonly read: PayloadRead,
  ) {}

  /** At most `n` due jobs and the deadline after them (undefined when none is left); `get` reads a job by id. */
  due(now: number, n: number, get: (id: string) => Job | undefined): { jobs: Job[]; next: number | undefined } {
    let sized = this.sized.get(n);
    if (!sized) {
      sized = this.db.prepare<[], unknown[]>(`SELECT id, deadline_at, octet_length(input) + ifnull(octet_length(output), 0) FROM jobs ORDER BY deadline_at LIMIT ${n + 1}`).raw(true);
      this.sized.set(n, sized);
    }
    const ids: string[] = [];
    let bytes = 0;
    let next: number | undefined;
    let cut = false;
    for (const [id, at, size] of sized.all() as [string, number, number][]) {
      if (at > now || ids.length === n) {
        next = at;
        break;
      }
      if (ids.length > 0 && bytes + size > DUE_BYTES_MAX) {
        next = at;
        cut = true;
        break;
      }
      ids.push(id);
      bytes += size;
    }
    const jobs: Job[] = [];
    if (cut) {
      // Large payloads: one by one, as many as the bound takes; the next round reads the rest.
      for (const id of ids) {
        const job = get(id);
        if (job) jobs.push(job);
      }
      return { jobs, next };
    }
    if (ids.length === 0) return { jobs, next };
    // The due rows alone, whole, in one read (the rows after them stay unread).
    const k = ids.length;
    let st = this.whole.get(k);
    if (!st) {
      st = this.rawRows(`SELECT ${COLUMNS} FROM jobs ORDER BY deadline_at LIMIT ${k}`) as Statement<[], unknown[]>;
      this.whole.set(k, st);
    }
    for (const row of st.all()) {
      if ((row[DEADLINE_AT] as number) > now) return { jobs, next: row[DEADLINE_AT] as number };
      jobs.push(fromArray(row, this.read));
    }
    return { jobs, next };
  }
}
