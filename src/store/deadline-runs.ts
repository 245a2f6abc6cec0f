/** One run: deadlines in order (never decreasing), with their ids, from `head` on. */
interface Run {
  ats: number[];
  ids: string[];
  head: number;
}

/** Runs past this many are merged into one sorted run (deadlines that keep coming out of order). */
const RUNS_MAX = 16;

/**
 * The deadlines of the jobs held in memory (job-writes.ts), for the deadline timer, without a scan
 * of every job held at each firing. Jobs are held in about the order of their deadlines within a
 * kind (a `/run` job's retention is its finish plus 30 minutes, a `/runsync` job's plus one), so
 * each deadline joins the end of a run whose last deadline is not later: a few runs, each in
 * order, and the earliest deadline is the least of their heads.
 *
 * An entry is not removed when its job leaves or changes: `valid` tells whether it is still its
 * job's deadline, and an entry that is not is dropped when met at a run's head, or by `compact`,
 * which the holder calls once the entries outnumber the jobs held.
 */
export class DeadlineRuns {
  private runs: Run[] = [];
  /** The run the last deadline joined: the next one mostly joins it too. */
  private last: Run | undefined;
  private entries = 0;

  /** Entries, stale ones included. */
  get size(): number {
    return this.entries;
  }

  add(id: string, at: number): void {
    if (at === Infinity) return;
    this.entries++;
    const last = this.last;
    if (last && tail(last) <= at) {
      last.ats.push(at);
      last.ids.push(id);
      return;
    }
    // The run whose last deadline is the latest not after this one keeps the runs few.
    let best: Run | undefined;
    for (const run of this.runs) if (tail(run) <= at && (!best || tail(run) > tail(best))) best = run;
    if (!best) {
      if (this.runs.length >= RUNS_MAX) return this.merge([[id, at]]);
      best = { ats: [], ids: [], head: 0 };
      this.runs.push(best);
    }
    best.ats.push(at);
    best.ids.push(id);
    this.last = best;
  }

  /**
   * At most `n` ids whose deadline has come (`valid` ones), earliest first, and the deadline after
   * them: `now` when more are due than it gives, Infinity when none is left. Entries stay until
   * their job changes or leaves: a due job the timer leaves as it is is given again.
   */
  due(now: number, n: number, valid: (id: string, at: number) => boolean): { ids: string[]; next: number } {
    const ids: string[] = [];
    for (const run of this.runs) this.dropStale(run, valid);
    if (this.runs.some(empty)) {
      this.runs = this.runs.filter((run) => !empty(run));
      if (this.last && empty(this.last)) this.last = undefined;
    }
    const at = this.runs.map((run) => run.ats[run.head]!);
    const cursor = this.runs.map((run) => run.head);
    for (;;) {
      let r = -1;
      for (let i = 0; i < at.length; i++) if (r < 0 || at[i]! < at[r]!) r = i;
      if (r < 0 || at[r]! > now) return { ids, next: r < 0 ? Infinity : at[r]! };
      if (ids.length === n) return { ids, next: now };
      const run = this.runs[r]!;
      ids.push(run.ids[cursor[r]!]!);
      // The next valid entry of that run (stale ones past its head are skipped, not dropped).
      let c = cursor[r]! + 1;
      while (c < run.ats.length && !valid(run.ids[c]!, run.ats[c]!)) c++;
      cursor[r] = c;
      at[r] = c < run.ats.length ? run.ats[c]! : Infinity;
    }
  }

  /** Forgets every entry. */
  clear(): void {
    this.runs = [];
    this.last = undefined;
    this.entries = 0;
  }

  /** Keeps only the entries `valid` says are still their job's (each run stays in order). */
  compact(valid: (id: string, at: number) => boolean): void {
    let entries = 0;
    for (const run of this.runs) {
      let k = 0;
      for (let i = run.head; i < run.ats.length; i++) {
        if (!valid(run.ids[i]!, run.ats[i]!)) continue;
        run.ats[k] = run.ats[i]!;
        run.ids[k++] = run.ids[i]!;
      }
      run.ats.length = k;
      run.ids.length = k;
      run.head = 0;
      entries += k;
    }
    this.runs = this.runs.filter((run) => !empty(run));
    if (this.last && empty(this.last)) this.last = undefined;
    this.entries = entries;
  }

  /** Puts every entry, with `more`, into one run in deadline order. */
  private merge(more: Array<[string, number]>): void {
    const all = more;
    for (const run of this.runs) for (let i = run.head; i < run.ats.length; i++) all.push([run.ids[i]!, run.ats[i]!]);
    all.sort((a, b) => a[1] - b[1]);
    const run: Run = { ats: all.map((e) => e[1]), ids: all.map((e) => e[0]), head: 0 };
    this.runs = all.length > 0 ? [run] : [];
    this.last = this.runs[0];
    this.entries = all.length;
  }

  /** Drops the stale entries at a run's head. */
  private dropStale(run: Run, valid: (id: string, at: number) => boolean): void {
    while (run.head < run.ats.length && !valid(run.ids[run.head]!, run.ats[run.head]!)) {
      run.head++;
      this.entries--;
    }
    // Half of the run dropped: its arrays start again from the head.
    if (run.head > 1024 && run.head * 2 > run.ats.length) {
      run.ats.splice(0, run.head);
      run.ids.splice(0, run.head);
      run.head = 0;
    }
  }
}

/** A run's last deadline; -Infinity when it has none left. */
const tail = (run: Run): number => (run.ats.length > run.head ? run.ats[run.ats.length - 1]! : -Infinity);

const empty = (run: Run): boolean => run.head >= run.ats.length;
