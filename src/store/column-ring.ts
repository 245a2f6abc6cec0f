/** A typed array a ring can keep a numeric column in. */
type NumberColumn = Uint8Array | Uint16Array | Float64Array;

/**
 * A first-in first-out queue kept column by column in growable rings rather than as an object per
 * entry: entries that wait for seconds under load outlive the young generation, and as objects
 * (with their boxed numbers) they cost the garbage collector more in copying and marking than the
 * rest of their work. A subclass holds the columns, writes an entry into `nextSlot()`, reads the
 * k-th oldest at `slot(k)` and copies its columns in `resize`.
 */
export abstract class ColumnRing {
  /** Slots in every column. */
  protected capacity = 256;
  /** Slot of the oldest entry. */
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** Drops the `n` oldest entries. */
  dropOldest(n: number): void {
    const dropped = Math.min(n, this.count);
    for (let k = 0; k < dropped; k++) this.release(this.slot(k));
    this.head = (this.head + dropped) % this.capacity;
    this.count -= dropped;
  }

  clear(): void {
    this.dropOldest(this.count);
  }

  /** The slot of the `k`-th oldest entry. */
  protected slot(k: number): number {
    return (this.head + k) % this.capacity;
  }

  /** The slot of a new newest entry (the columns grow when full): the caller fills it. */
  protected nextSlot(): number {
    if (this.count === this.capacity) {
      const size = this.capacity * 2;
      this.resize((k) => this.slot(k), size);
      this.head = 0;
      this.capacity = size;
    }
    return this.slot(this.count++);
  }

  /** Lets the strings of a slot go (they may be large, and they would live as long as the ring). */
  protected abstract release(slot: number): void;

  /** Replaces every column by one of `size` slots holding the k-th oldest entry at slot k (`order(k)` is its slot now). */
  protected abstract resize(order: (k: number) => number, size: number): void;

  /** A string column of `size` slots, the entries in order. */
  protected strings<T>(column: T[], order: (k: number) => number, size: number): T[] {
    const next = new Array<T>(size);
    for (let k = 0; k < this.count; k++) next[k] = column[order(k)]!;
    return next;
  }

  /** A numeric column of `size` slots, the entries in order. */
  protected numbers<A extends NumberColumn>(column: A, order: (k: number) => number, size: number): A {
    const next = new (column.constructor as new (n: number) => A)(size);
    for (let k = 0; k < this.count; k++) next[k] = column[order(k)]!;
    return next;
  }
}
