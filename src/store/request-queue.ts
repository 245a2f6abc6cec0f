import type { RequestRecord } from "../domain/observability.js";
import { ColumnRing } from "./column-ring.js";

/**
 * Journal entries not written yet, oldest first, column by column (see `ColumnRing`). Entries of a
 * database in memory wait here until the journal is read (see SqliteObservabilityStore), so under
 * load ten thousand of them live for seconds: as objects they cost the collector more than all
 * the rest of the journal's work per request.
 */
export class RequestQueue extends ColumnRing {
  private method: string[] = new Array<string>(this.capacity);
  private path: string[] = new Array<string>(this.capacity);
  private query: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private endpoint: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private operation: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private bodyText: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private responseText: Array<string | undefined> = new Array<string | undefined>(this.capacity);
  private status = new Uint16Array(this.capacity);
  private at = new Float64Array(this.capacity);
  private durationMs = new Float64Array(this.capacity);

  /** One copy of each method, endpoint and operation name: each request brings its own. */
  private readonly names = new Map<string, string>();

  push(r: RequestRecord): void {
    const i = this.nextSlot();
    this.method[i] = this.name(r.method);
    this.path[i] = r.path;
    this.query[i] = r.query;
    this.endpoint[i] = r.endpoint === undefined ? undefined : this.name(r.endpoint);
    this.operation[i] = r.operation === undefined ? undefined : this.name(r.operation);
    this.bodyText[i] = r.bodyText;
    this.responseText[i] = r.responseText;
    this.status[i] = r.status;
    this.at[i] = r.at;
    this.durationMs[i] = r.durationMs;
  }

  /** Every entry, oldest first; the queue is empty afterwards. */
  takeAll(): RequestRecord[] {
    const out = new Array<RequestRecord>(this.length);
    for (let k = 0; k < out.length; k++) {
      const i = this.slot(k);
      out[k] = {
        method: this.method[i]!,
        path: this.path[i]!,
        query: this.query[i],
        endpoint: this.endpoint[i],
        operation: this.operation[i],
        status: this.status[i]!,
        at: this.at[i]!,
        durationMs: this.durationMs[i]!,
        bodyText: this.bodyText[i],
        responseText: this.responseText[i],
      };
    }
    this.clear();
    return out;
  }

  private name(s: string): string {
    const known = this.names.get(s);
    if (known !== undefined) return known;
    if (this.names.size >= 1000) this.names.clear();
    this.names.set(s, s);
    return s;
  }

  protected release(i: number): void {
    this.path[i] = "";
    this.query[i] = undefined;
    this.endpoint[i] = undefined;
    this.bodyText[i] = undefined;
    this.responseText[i] = undefined;
  }

  protected resize(order: (k: number) => number, size: number): void {
    this.method = this.strings(this.method, order, size);
    this.path = this.strings(this.path, order, size);
    this.query = this.strings(this.query, order, size);
    this.endpoint = this.strings(this.endpoint, order, size);
    this.operation = this.strings(this.operation, order, size);
    this.bodyText = this.strings(this.bodyText, order, size);
    this.responseText = this.strings(this.responseText, order, size);
    this.status = this.numbers(this.status, order, size);
    this.at = this.numbers(this.at, order, size);
    this.durationMs = this.numbers(this.durationMs, order, size);
  }
}
