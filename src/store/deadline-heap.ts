/**
 * The deadlines of the jobs held in memory (held-jobs.ts), for the deadline timer, without a scan
 * of every job held at each firing: a binary heap of (deadline, id), two arrays and no object an
 * entry. Jobs are held in about the order of their deadlines (a `/run` job's retention is its
 * finish plus 30 minutes), and a deadline later than its parent's stays where it is put, so adding
 * one mostly costs a comparison; one out of order (a queued job's own ttl) climbs at most the
 * heap's height.
 *
 * An entry is not removed when its job leaves or changes: `valid` tells whether it is still its
 * job's deadline, and one that is not is dropped when it comes to the top, or by `compact`, which
 * the holder calls once the entries outnumber the jobs held.
 */
export class DeadlineHeap {
  private ats: number[] = [];
  private ids: string[] = [];

  /** Entries, stale ones included. */
  get size(): number {
    return this.ats.length;
  }

  add(id: string, at: number): void {
    if (at === Infinity) return;
    this.ats.push(at);
    this.ids.push(id);
    this.up(this.ats.length - 1);
  }

  /**
   * At most `n` ids whose deadline has come (`valid` ones), earliest first, and the deadline after
   * them: `now` when more are due than it gives, Infinity when none is left. They stay until their
   * job changes or leaves: a due job the timer leaves as it is is given again.
   */
  due(now: number, n: number, valid: (id: string, at: number) => boolean): { ids: string[]; next: number } {
    const ids: string[] = [];
    const ats: number[] = [];
    let next = Infinity;
    while (this.ats.length > 0) {
      const at = this.ats[0]!;
      const id = this.ids[0]!;
      if (!valid(id, at)) {
        this.pop();
        continue;
      }
      if (at > now || ids.length === n) {
        next = at > now ? at : now;
        break;
      }
      this.pop();
      ids.push(id);
      ats.push(at);
    }
    // Given back: they stay until their job changes or leaves.
    for (let i = 0; i < ids.length; i++) this.add(ids[i]!, ats[i]!);
    return { ids, next };
  }

  clear(): void {
    this.ats = [];
    this.ids = [];
  }

  /** Keeps only the entries `valid` says are still their job's. */
  compact(valid: (id: string, at: number) => boolean): void {
    let k = 0;
    for (let i = 0; i < this.ats.length; i++) {
      if (!valid(this.ids[i]!, this.ats[i]!)) continue;
      this.ats[k] = this.ats[i]!;
      this.ids[k++] = this.ids[i]!;
    }
    this.ats.length = k;
    this.ids.length = k;
    for (let i = (k >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private pop(): void {
    const last = this.ats.length - 1;
    this.swap(0, last);
    this.ats.pop();
    this.ids.pop();
    if (last > 0) this.down(0);
  }

  private up(i: number): void {
    const ats = this.ats;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ats[parent]! <= ats[i]!) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const ats = this.ats;
    const n = ats.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const r = l + 1;
      const least = r < n && ats[r]! < ats[l]! ? r : l;
      if (ats[i]! <= ats[least]!) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    const at = this.ats[a]!;
    this.ats[a] = this.ats[b]!;
    this.ats[b] = at;
    const id = this.ids[a]!;
    this.ids[a] = this.ids[b]!;
    this.ids[b] = id;
  }
}
