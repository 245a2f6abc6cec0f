import type { Job } from "../domain/job.js";

/** Rows of one generation at most. */
const GENERATION_ROWS = 4_096;

/**
 * The jobs held in one generation, in the order they came (a job that left is `undefined` in its
 * place), the least and greatest of their ids' `orderKey`s, and where each id is, made when first
 * looked up.
 */
interface Generation {
  jobs: Array<Job | undefined>;
  live: number;
  min: string;
  max: string;
  index: Map<string, number> | undefined;
}

/**
 * The jobs whose rows are held in memory (held-jobs.ts), by id, in the order they came: a list
 * of generations of at most `GENERATION_ROWS` each, each an array, rather than one map of them all.
 * A new job joins the newest generation at its end; the oldest rows leave a generation at a time.
 * One map of hundreds of thousands of jobs cost a few cache misses at each new job (its table far
 * larger than the caches) and a copy of it all at each doubling; most held jobs are never looked up
 * by id (an echo job is done in the turn it came), so a generation's map of ids is made only when
 * one of its ids is first looked for.
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
    const at = this.find(id);
    return at === undefined ? undefined : at.g.jobs[at.i];
  }

  /** Holds a job not held yet, after every other. */
  add(job: Job): void {
    let g = this.gens[this.gens.length - 1];
    const key = orderKey(job.id);
    if (g === undefined || g.jobs.length >= GENERATION_ROWS) {
      g = { jobs: [], live: 0, min: key, max: key, index: undefined };
      this.gens.push(g);
    } else if (key < g.min) g.min = key;
    else if (key > g.max) g.max = key;
    g.index?.set(job.id, g.jobs.length);
    g.jobs.push(job);
    g.live++;
    this.count++;
  }

  /** Holds a job's new state in the place of its old one; the old one (undefined when it was not held: then it is added). */
  replace(job: Job): Job | undefined {
    const at = this.find(job.id);
    if (at === undefined) {
      this.add(job);
      return undefined;
    }
    const before = at.g.jobs[at.i];
    at.g.jobs[at.i] = job;
    return before;
  }

  /**
   * Forgets a job's row; the job it held, if any. A generation left three quarters empty joins the
   * one before it when both fit in one, or else drops its empty places: a job held long (queued for
   * a day) among many that leave keeps no generation's worth of places alive, and the generations
   * stay about as few as the jobs held fill.
   */
  delete(id: string): Job | undefined {
    const at = this.find(id);
    if (at === undefined) return undefined;
    const { g, i, k } = at;
    const job = g.jobs[i];
    g.jobs[i] = undefined;
    g.index!.delete(id);
    g.live--;
    this.count--;
    if (g.live === 0) this.gens.splice(k, 1);
    else if (g.live * 4 < g.jobs.length) this.squeeze(k);
    return job;
  }

  /** Takes the `n` oldest rows out (whole generations while they fit), in the order they came. */
  takeOldest(n: number): Job[] {
    const out: Job[] = [];
    while (out.length < n && this.gens.length > 0) {
      const g = this.gens[0]!;
      const whole = g.live <= n - out.length;
      for (let i = 0; i < g.jobs.length && out.length < n; i++) {
        const job = g.jobs[i];
        if (job === undefined) continue;
        out.push(job);
        if (whole) continue;
        g.jobs[i] = undefined;
        g.index?.delete(job.id);
        g.live--;
      }
      if (whole) this.gens.shift();
    }
    this.count -= out.length;
    return out;
  }

  /** Rows in the oldest generation (what a slice of writing takes). */
  oldestSize(): number {
    return this.gens[0]?.live ?? 0;
  }

  values(): IterableIterator<Job> {
    return valuesOf(this.gens);
  }

  clear(): void {
    this.gens = [];
    this.count = 0;
  }

  /** The generation holding a job (`k` its place in the list), and the job's place there. */
  private find(id: string): { g: Generation; i: number; k: number } | undefined {
    const gens = this.gens;
    const key = orderKey(id);
    for (let k = gens.length - 1; k >= 0; k--) {
      const g = gens[k]!;
      if (key < g.min || key > g.max) continue;
      const i = indexOf(g).get(id);
      if (i !== undefined) return { g, i, k };
    }
    return undefined;
  }

  /** The `k`th generation's jobs join the one before when both fit in one, else lose their empty places; order kept. */
  private squeeze(k: number): void {
    const g = this.gens[k]!;
    const live = g.jobs.filter((job): job is Job => job !== undefined);
    const before = this.gens[k - 1];
    if (before !== undefined && before.live + live.length <= GENERATION_ROWS) {
      before.jobs = [...before.jobs.filter((job) => job !== undefined), ...live];
      before.live = before.jobs.length;
      if (g.min < before.min) before.min = g.min;
      if (g.max > before.max) before.max = g.max;
      before.index = undefined;
      this.gens.splice(k, 1);
      return;
    }
    g.jobs = live;
    g.index = undefined;
  }
}

/** A generation's map of ids to places, made on its first look-up and kept true after. */
function indexOf(g: Generation): Map<string, number> {
  if (g.index === undefined) {
    g.index = new Map();
    for (let i = 0; i < g.jobs.length; i++) {
      const job = g.jobs[i];
      if (job !== undefined) g.index.set(job.id, i);
    }
  }
  return g.index;
}

/** What an id is ordered by: a `/runsync` job's id after its `sync-`, so that both kinds of ids made in the same ms sort together. */
const orderKey = (id: string): string => (id.startsWith("sync-") ? id.slice(5) : id);

function* valuesOf(gens: readonly Generation[]): IterableIterator<Job> {
  for (const g of gens) for (const job of g.jobs) if (job !== undefined) yield job;
}
