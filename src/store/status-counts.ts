import { JOB_STATUSES, type Job, type JobStatus } from "../domain/job.js";

/** An endpoint's jobs by status, and the retries of them all. */
interface Counts {
  byStatus: Record<JobStatus, number>;
  retries: number;
}

const zero = (): Record<JobStatus, number> => Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;

/**
 * The jobs of each endpoint by status, and the sum of their retries, for `/health`: counted in
 * SQLite the first time they are asked of an endpoint, then kept true in memory by every write of
 * the job store (as its queue indexes are), so `/health` reads no table. What the store cannot
 * follow job by job (a purge, the endpoint's jobs deleted, a database replaced or a turn rolled
 * back) drops the counts, counted again when next asked.
 */
export class StatusCounts {
  private readonly byEndpoint = new Map<string, Counts>();

  /** The endpoint's counts, from memory, or `count()`'s (a SQL count) the first time. */
  of(endpointId: string, count: () => Counts): Counts {
    let c = this.byEndpoint.get(endpointId);
    if (!c) this.byEndpoint.set(endpointId, (c = count()));
    return c;
  }

  /** Whether any endpoint's counts are kept. */
  get any(): boolean {
    return this.byEndpoint.size > 0;
  }

  /** Whether the endpoint's counts are kept (a write of its jobs must then tell `changed`). */
  kept(endpointId: string): boolean {
    return this.byEndpoint.has(endpointId);
  }

  /** A job of the endpoint went from `before` (undefined: it was not there) to `after` (undefined: deleted). */
  changed(endpointId: string, before: Job | undefined, after: Job | undefined): void {
    const c = this.byEndpoint.get(endpointId);
    if (!c) return;
    if (before) {
      c.byStatus[before.status]--;
      c.retries -= before.retries;
    }
    if (after) {
      c.byStatus[after.status]++;
      c.retries += after.retries;
    }
  }

  /** Forgets the endpoint's counts (its jobs changed in a way not followed job by job). */
  drop(endpointId: string): void {
    this.byEndpoint.delete(endpointId);
  }

  clear(): void {
    this.byEndpoint.clear();
  }
}

/** Counts as SQL's `status, COUNT(*)` rows and the sum of retries give them. */
export function countsOf(rows: Iterable<{ status: string; n: number }>, retries: number | null | undefined): Counts {
  const byStatus = zero();
  for (const r of rows) byStatus[r.status as JobStatus] = r.n;
  return { byStatus, retries: retries ?? 0 };
}
