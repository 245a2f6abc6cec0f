import type { Job } from "../domain/job.js";

/** Rows of one generation at most: a map this small stays in the CPU's caches. */
const GENERATION_ROWS = 4_096;

/** The jobs held in one generation, in the order they came, and the least and greatest of their ids' `orderKey`s. */
interface Generation {
  rows: Map<string, Job>;
  min: string;
  max: string;
}

/**
 * The jobs whose rows are held in memory (job-writes.ts), by id, in the order they came: a list
 * of generations of at most `GENERATION_ROWS` each rather than one map of them all. A new job
 * joins the newest generation; the oldest rows leave a generation at a time. One map of hundreds
 * of thousands of jobs cost a few cache misses at each new job (its table far larger than the
 * caches) and a copy of it all at each doubling; a generation's map does not.
 *
 * Job ids sort by creation (ids.ts; a `/runsync` job's after its `sync-`), so each generation
 * covers a range of ids of its own, and a look-up by id reads only the generations whose range
 * holds it: mostly one.
 */
export class HeldRows {
  private gens: Generation[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: string): Job | undefined {
    const gens = this.gens;
    const key = orderKey(id);
    for (let i = gens.length - 1; i >= 0; i--) {
      const g = gens[i]!;
      if (key >= g.min && key <= g.max) {
        const job = g.rows.get(id);
        if (job !== undefined) return job;
      }
    }
    return undefined;
  }

  /** Holds a job not held yet, after every other. */
  add(job: Job): void {
    let g = this.gens[this.gens.length - 1];
    const key = orderKey(job.id);
    if (g === undefined || g.rows.size >= GENERATION_ROWS) {
      g = { rows: new Map(), min: key, max: key };
      this.gens.push(g);
    } else if (key < g.min) g.min = key;
    else if (key > g.max) g.max = key;
    g.rows.set(job.id, job);
    this.count++;
  }

  /** Holds a job's new state in the place of its old one; the old one (undefined when it was not held: then it is added). */
  replace(job: Job): Job | undefined {
    const g = this.generationOf(job.id);
    if (g === undefined) {
      this.add(job);
      return undefined;
    }
    const before = g.rows.get(job.id);
    g.rows.set(job.id, job);
    return before;
  }

  /** Forgets a job's row; the job it held, if any. */
  delete(id: string): Job | undefined {
    const i = this.indexOf(id);
    if (i < 0) return undefined;
    const g = this.gens[i]!;
    const job = g.rows.get(id)!;
    g.rows.delete(id);
    this.count--;
    if (g.rows.size === 0) this.gens.splice(i, 1);
    return job;
  }

  /** Takes the `n` oldest rows out (whole generations while they fit), in the order they came. */
  takeOldest(n: number): Job[] {
    const out: Job[] = [];
    while (out.length < n && this.gens.length > 0) {
      const g = this.gens[0]!;
      if (g.rows.size <= n - out.length) {
        for (const job of g.rows.values()) out.push(job);
        this.gens.shift();
        continue;
      }
      for (const [id, job] of g.rows) {
        out.push(job);
        g.rows.delete(id);
        if (out.length === n) break;
      }
    }
    this.count -= out.length;
    return out;
  }

  /** Rows in the oldest generation (what a slice of writing takes). */
  oldestSize(): number {
    return this.gens[0]?.rows.size ?? 0;
  }

  values(): IterableIterator<Job> {
    return valuesOf(this.gens);
  }

  clear(): void {
    this.gens = [];
    this.count = 0;
  }

  private generationOf(id: string): Generation | undefined {
    const i = this.indexOf(id);
    return i < 0 ? undefined : this.gens[i];
  }

  private indexOf(id: string): number {
    const gens = this.gens;
    const key = orderKey(id);
    for (let i = gens.length - 1; i >= 0; i--) {
      const g = gens[i]!;
      if (key >= g.min && key <= g.max && g.rows.has(id)) return i;
    }
    return -1;
  }
}

/** What an id is ordered by: a `/runsync` job's id after its `sync-`, so that both kinds of ids made in the same ms sort together. */
const orderKey = (id: string): string => (id.startsWith("sync-") ? id.slice(5) : id);

function* valuesOf(gens: readonly Generation[]): IterableIterator<Job> {
  for (const g of gens) yield* g.rows.values();
}
