/** The clock's timers, ordered by due time then insertion, so ties run in insertion order. */

export interface Timer {
  id: number;
  at: number;
  seq: number;
  fn: () => void;
  label: string;
  cancelled: boolean;
}

/** A binary min-heap ordered by (at, seq), so ties run in insertion order. */
export class TimerHeap {
  private items: Timer[] = [];

  get size(): number {
    return this.items.length;
  }

  push(t: Timer): void {
    const a = this.items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }

  peek(): Timer | undefined {
    return this.items[0];
  }

  pop(): Timer | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      a[0] = last;
      this.down(0);
    }
    return top;
  }

  /** Removes the cancelled timers, in time linear in the heap's size. */
  dropCancelled(): void {
    this.items = this.items.filter((t) => !t.cancelled);
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** Moves the timer at `i` down to its place. */
  private down(i: number): void {
    const a = this.items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && before(a[l]!, a[m]!)) m = l;
      if (r < a.length && before(a[r]!, a[m]!)) m = r;
      if (m === i) return;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
  }

  clear(): void {
    this.items = [];
  }
}

function before(x: Timer, y: Timer): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}
