import type { RequestRecord } from "../domain/observability.js";

/**
 * Journal entries not written yet, oldest first, kept column by column in growable rings rather
 * than as an object each. Entries of a database in memory wait here until the journal is read
 * (see SqliteObservabilityStore), so under load ten thousand of them live for seconds: as objects
 * (and their boxed times) they outlived the young generation and the garbage collector's copying
 * and marking cost more than all the rest of the journal's work per request.
 */
export class RequestQueue {
  private capacity = 256;
  /** Index of the oldest entry. */
  private head = 0;
  private count = 0;
  private method: string[] = new Array<string>(this.capacity);
  private path: string[] = new Array<string>(this.capacity);
  private endpoint: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private operation: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private bodyText: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private status = new Uint16Array(this.capacity);
  private at = new Float64Array(this.capacity);
  private durationMs = new Float64Array(this.capacity);

  get length(): number {
    return this.count;
  }

  /** One copy of each method, endpoint and operation name: each request brings its own. */
  private readonly names = new Map<string, string>();

  push(r: RequestRecord): void {
    if (this.count === this.capacity) this.grow();
    const i = (this.head + this.count) % this.capacity;
    this.method[i] = this.name(r.method);
    this.path[i] = r.path;
    this.endpoint[i] = r.endpoint === undefined ? undefined : this.name(r.endpoint);
    this.operation[i] = r.operation === undefined ? undefined : this.name(r.operation);
    this.bodyText[i] = r.bodyText;
    this.status[i] = r.status;
    this.at[i] = r.at;
    this.durationMs[i] = r.durationMs;
    this.count++;
  }

  /** Drops the `n` oldest entries. */
  dropOldest(n: number): void {
    const dropped = Math.min(n, this.count);
    for (let k = 0; k < dropped; k++) this.release((this.head + k) % this.capacity);
    this.head = (this.head + dropped) % this.capacity;
    this.count -= dropped;
  }

  clear(): void {
    this.dropOldest(this.count);
  }

  /** Every entry, oldest first; the queue is empty afterwards. */
  takeAll(): RequestRecord[] {
    const out = new Array<RequestRecord>(this.count);
    for (let k = 0; k < this.count; k++) {
      const i = (this.head + k) % this.capacity;
      out[k] = {
        method: this.method[i]!,
        path: this.path[i]!,
        endpoint: this.endpoint[i],
        operation: this.operation[i],
        status: this.status[i]!,
        at: this.at[i]!,
        durationMs: this.durationMs[i]!,
        bodyText: this.bodyText[i],
      };
      this.release(i);
    }
    this.head = 0;
    this.count = 0;
    return out;
  }

  private name(s: string): string {
    const known = this.names.get(s);
    if (known !== undefined) return known;
    if (this.names.size >= 1000) this.names.clear();
    this.names.set(s, s);
    return s;
  }

  /** Lets the strings of a slot go (a body can be large). */
  private release(i: number): void {
    this.path[i] = "";
    this.endpoint[i] = undefined;
    this.bodyText[i] = undefined;
  }

  private grow(): void {
    const order = (k: number) => (this.head + k) % this.capacity;
    const strings = <T>(a: T[]) => Array.from({ length: this.capacity * 2 }, (_, k) => (k < this.count ? a[order(k)] : undefined)) as T[];
    const numbers = <A extends Uint16Array | Float64Array>(a: A, make: (n: number) => A) => {
      const next = make(this.capacity * 2);
      for (let k = 0; k < this.count; k++) next[k] = a[order(k)]!;
      return next;
    };
    this.method = strings(this.method);
    this.path = strings(this.path);
    this.endpoint = strings(this.endpoint);
    this.operation = strings(this.operation);
    this.bodyText = strings(this.bodyText);
    this.status = numbers(this.status, (n) => new Uint16Array(n));
    this.at = numbers(this.at, (n) => new Float64Array(n));
    this.durationMs = numbers(this.durationMs, (n) => new Float64Array(n));
    this.head = 0;
    this.capacity *= 2;
  }
}
