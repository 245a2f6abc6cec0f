import type { Statement } from "better-sqlite3";
import type { Job } from "../domain/job.js";
import { nextDeadline } from "../domain/job.js";
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
  private readonly nextTwo: Statement<[], [string, number]>;

  constructor(
    private readonly db: Db,
    /** A statement returning rows as arrays in COLUMNS order. */
    private readonly rawRows: (sql: string) => Statement<unknown[], unknown[]>,
    private readonly read: PayloadRead,
  ) {
    this.nextTwo = db.prepare<[], [string, number]>(`SELECT id, deadline_at FROM jobs ORDER BY deadline_at LIMIT 2`).raw(true);
  }

  /**
   * At most `n` due jobs, of the rows written and of the rows held in memory (`held`: those due,
   * earliest first, and the least deadline of the others), in deadline order, and the deadline
   * after them; `get` reads a job by id, `remember` keeps one at hand.
   */
  dueAll(now: number, n: number, held: { ids: string[]; next: number }, get: (id: string) => Job | undefined, remember: (job: Job) => void): { jobs: Job[]; next: number | undefined } {
    const stored = this.dueStored(now, n, get, remember);
    if (held.ids.length === 0) return { jobs: stored.jobs, next: earliest(stored.next, held.next) };
    const jobs = stored.jobs;
    for (const id of held.ids) {
      const job = get(id);
      if (job) jobs.push(job);
    }
    jobs.sort((a, b) => nextDeadline(a) - nextDeadline(b));
    const left = jobs.splice(n);
    return { jobs, next: earliest(left[0] === undefined ? undefined : nextDeadline(left[0]), earliest(stored.next, held.next)) };
  }

  /** The due jobs of the rows written. */
  private dueStored(now: number, n: number, get: (id: string) => Job | undefined, remember: (job: Job) => void): { jobs: Job[]; next: number | undefined } {
    if (n === 1) {
      // Mostly one job is due at a time, and it is one the store has at hand (running, queued or
      // just finished): its id and the next deadline are enough, without reading and parsing rows.
      const rows = this.nextTwo.all();
      const first = rows[0];
      if (!first || first[1] > now) return { jobs: [], next: first?.[1] };
      const job = get(first[0]);
      if (job) return { jobs: [job], next: rows[1]?.[1] };
    }
    const due = this.due(now, n, get);
    for (const job of due.jobs) remember(job); // the deadline timer's transitions read them again
    return due;
  }

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

/** The earlier of two deadlines, either possibly unknown or Infinity (undefined when neither is known). */
function earliest(a: number | undefined, b: number | undefined): number | undefined {
  const at = Math.min(a ?? Infinity, b ?? Infinity);
  return at === Infinity ? undefined : at;
}
