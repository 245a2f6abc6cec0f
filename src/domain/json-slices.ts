import { weighs } from "./payload-size.js";

/**
 * `JSON.parse` and `JSON.stringify` of large payloads a slice at a time, pausing between slices,
 * so that the event loop is never held for the whole of a 20 MB input or output: a handler in
 * this process gets its input as a value and returns its output as one, and the native calls
 * hold the loop for as long as the payload takes (about half a second for 20 MB of small numbers).
 *
 * Both split a payload along its own structure and leave the work to the native calls on parts of
 * about `SLICE` characters: a container larger than that is taken member by member, runs of small
 * members go to one native call together, and a single scalar (a long base64 string) goes whole,
 * which costs little however long it is. The result is the native call's on the whole. A parse
 * also gives one native call at most `TOKENS` objects, arrays and strings, and pauses once a
 * turn has taken `TURN_MS` of the wall's time (100,000 small objects in 1.5 MB once held the loop
 * 160–280 ms in two slices).
 */

/** Characters of JSON handled by one native call at most (but for a single long scalar). */
export const SLICE = 256 * 1024;

/**
 * Structural characters (a string's quote, a container's open or close) a parse gives one native
 * call at most: the cost of a slice is in its objects, arrays and keys more than in its
 * characters (a slice of `[{},[]]` takes ten times one of numbers), so a slice of them is cut
 * shorter.
 */
export const TOKENS = 4096;

/** Wall ms a turn of the loop is given before a pause is due, when the wall's time is given. */
export const TURN_MS = 10;

/**
 * How a payload is cut: `slice` characters per native call, `pause` between about two of them
 * (the next turn of the event loop, `clock.wall.turn()`: what else is waiting runs first). With
 * `now` (the clock's wall time), a pause is also due as soon as `turnMs` of it have passed since
 * the last one, whatever the characters: no turn is held much longer than that by a payload of
 * a costly shape.
 */
export interface Slicing {
  slice?: number;
  pause: () => Promise<void>;
  now?: () => number;
  turnMs?: number;
}

class Pacer {
  private done = 0;
  private since: number | undefined;
  readonly slice: number;
  private readonly turnMs: number;
  private readonly pause: () => Promise<void>;
  private readonly now: (() => number) | undefined;
  constructor(slicing: Slicing) {
    this.slice = slicing.slice ?? SLICE;
    this.pause = slicing.pause;
    this.now = slicing.now;
    this.turnMs = slicing.turnMs ?? TURN_MS;
    this.since = this.now?.();
  }
  /**
   * Counts `n` characters handled; true when a pause is due (then `rest()`): a slice's worth of
   * characters, or the turn's time spent. (It is called after an await, where the wall's time is
   * read afresh: compose's wall reads it once per run of code.)
   */
  add(n: number): boolean {
    this.done += n;
    if (this.done >= this.slice) return true;
    return this.since !== undefined && this.now!() - this.since >= this.turnMs;
  }
  async rest(): Promise<void> {
    this.done = 0;
    await this.pause();
    this.since = this.now?.();
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The end (exclusive) of the scalar starting at `i` (no leading space): a string, a number, a literal. */
function extent(text: string, i: number): number {
  if (text.charCodeAt(i) === 0x22) return stringEnd(text, i, text.length);
  let j = i + 1;
  for (; j < text.length; j++) {
    const d = text.charCodeAt(j);
    if (d === 0x2c || d === 0x5d || d === 0x7d || isSpace(d)) break;
  }
  return j;
}

/**
 * The end (exclusive) of the string whose opening quote is at `i`, or -1 past `limit`; past the
 * text's end when it has no closing quote (a parse of it up to there then fails, as it must).
 */
function stringEnd(text: string, i: number, limit: number): number {
  let j = i + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    if (q === -1) return text.length + 1;
    if (q >= limit) return -1;
    let backslashes = 0;
    for (let k = q - 1; k > i && text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

const skipSpace = (text: string, i: number): number => {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
};

/** Sets `key` as JSON.parse does: an own property, even for `__proto__`. */
function own(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/**
 * `JSON.parse(text)`, in slices with `pause()` between them. Throws the native parse's error for a
 * text that is not JSON (a slice of it, so the position named may differ).
 */
export async function parseInSlices(text: string, slicing: Slicing): Promise<unknown> {
  const pacer = new Pacer(slicing);
  if (text.length <= pacer.slice) return JSON.parse(text);
  const start = skipSpace(text, 0);
  const [value, end] = await parseValue(text, start, pacer);
  if (skipSpace(text, end) !== text.length) JSON.parse(text.slice(start)); // throws: something follows the value
  // What uses the value starts in a turn of its own (joining a long array's parts took this one).
  await pacer.rest();
  return value;
}

/**
 * From `i`, a member of a container (depth 0), scans ahead: the position of the container's close
 * when it comes before `limit`, else of the last comma between members before `limit` (-1: the
 * member at `i` alone reaches past it). Past `TOKENS` structural characters (a string, an open or
 * a close) the run ends as at `limit`. One pass over the characters, a string skipped by a native
 * search for its closing quote.
 */
function scanRun(text: string, i: number, limit: number): { close: number; comma: number } {
  let depth = 0;
  let comma = -1;
  let tokens = 0;
  const end = Math.min(limit, text.length);
  for (let p = i; p < end; p++) {
    const d = text.charCodeAt(p);
    if (d === 0x2c) {
      if (depth === 0) comma = p;
      continue;
    }
    const open = d === 0x7b || d === 0x5b;
    if (d !== 0x22 && !open && d !== 0x7d && d !== 0x5d) continue;
    if (++tokens > TOKENS) break;
    if (d === 0x22) {
      const e = stringEnd(text, p, limit);
      if (e === -1) break;
      p = e - 1;
    } else if (open) depth++;
    else if (depth === 0) return { close: p, comma };
    else depth--;
  }
  return { close: -1, comma };
}

/**
 * `to`, or the nearest cut around it that splits no escape (`\\n`, `\\u00e9`) in a string's text
 * from `at` (itself such a cut): before the escape it would split, or after it when that would
 * leave nothing from `at`.
 */
function safeCut(text: string, at: number, to: number): number {
  const b = text.lastIndexOf("\\", to - 1);
  if (b < at || b < to - 6) return to;
  let r = b;
  while (r > at && text.charCodeAt(r - 1) === 0x5c) r--;
  // A run of backslashes is escapes of two characters from its start: an even run is whole ones.
  if ((b - r) % 2 === 1) return to;
  const length = text.charCodeAt(b + 1) === 0x75 ? 6 : 2;
  if (b + length <= to) return to;
  return b > at ? b : b + length;
}

/**
 * The string whose quote is at `i`, and where it ends: a long one (a base64 image) a piece at a
 * time, each piece ending before a backslash so that no escape is cut in two (a surrogate pair cut
 * in two comes together again when the pieces are joined).
 */
async function parseString(text: string, i: number, pacer: Pacer): Promise<[string, number]> {
  const end = stringEnd(text, i, text.length);
  if (end - i <= pacer.slice || end > text.length) return [JSON.parse(text.slice(i, end)) as string, end];
  let out = "";
  for (let at = i + 1; at < end - 1; ) {
    const to = safeCut(text, at, Math.min(end - 1, at + pacer.slice));
    out += JSON.parse(`"${text.slice(at, to)}"`) as string;
    at = to;
    if (pacer.add(pacer.slice)) await pacer.rest();
  }
  return [out, end];
}

/** The value at `i` and where it ends. */
async function parseValue(text: string, i: number, pacer: Pacer): Promise<[unknown, number]> {
  const c = text.charCodeAt(i);
  if (c === 0x22) return parseString(text, i, pacer);
  if (c !== 0x7b && c !== 0x5b) {
    const end = extent(text, i);
    const value: unknown = JSON.parse(text.slice(i, end));
    if (pacer.add(end - i)) await pacer.rest();
    return [value, end];
  }
  const isArray = c === 0x5b;
  const out: Record<string, unknown> = {};
  // An array's items are kept in the parts they were parsed in, and joined once at the end: one
  // array grown an item at a time to millions was copied whole at each growth (tens of ms each).
  const parts: unknown[][] = [];
  /** Members from `from` to `to`, parsed together by one native call. */
  const run = async (from: number, to: number) => {
    const part = JSON.parse(isArray ? `[${text.slice(from, to)}]` : `{${text.slice(from, to)}}`) as unknown[] | Record<string, unknown>;
    if (isArray) parts.push(part as unknown[]);
    else for (const k of Object.keys(part)) own(out, k, (part as Record<string, unknown>)[k]);
    if (pacer.add(to - from)) await pacer.rest();
  };
  const result = (): unknown => (isArray ? ([] as unknown[]).concat(...parts) : out);
  const bad = (): never => {
    JSON.parse(text.slice(i)); // throws the native error
    throw new SyntaxError(`Unexpected token in JSON at position ${i}`);
  };
  let j = skipSpace(text, i + 1);
  if (text.charCodeAt(j) === (isArray ? 0x5d : 0x7d)) return [result(), j + 1];
  for (;;) {
    const scan = scanRun(text, j, j + pacer.slice);
    // A member cannot be empty ("[1,,2]", "[1,]"), which a run's native parse would not see.
    if (scan.close === j || scan.comma === j || (scan.comma === -1 && scan.close === -1 && text.charCodeAt(j) === 0x2c)) bad();
    if (scan.close !== -1) {
      await run(j, scan.close);
      return [result(), scan.close + 1];
    }
    if (scan.comma !== -1) {
      await run(j, scan.comma);
      j = skipSpace(text, scan.comma + 1);
      continue;
    }
    // One member larger than a slice: its key, then its value in slices of its own.
    let key: string | undefined;
    if (!isArray) {
      if (text.charCodeAt(j) !== 0x22) bad();
      const keyEnd = extent(text, j);
      key = JSON.parse(text.slice(j, keyEnd)) as string;
      j = skipSpace(text, keyEnd);
      if (text.charCodeAt(j) !== 0x3a) bad();
      j = skipSpace(text, j + 1);
    }
    const [value, valueEnd] = await parseValue(text, j, pacer);
    if (isArray) parts.push([value]);
    else own(out, key!, value);
    j = skipSpace(text, valueEnd);
    const d = text.charCodeAt(j);
    if (d === (isArray ? 0x5d : 0x7d)) return [result(), j + 1];
    if (d !== 0x2c) bad();
    j = skipSpace(text, j + 1);
  }
}

/**
 * `JSON.stringify(value)`, in slices with `pause()` between them: the same text, `toJSON` and
 * errors included (a cycle, a BigInt). The value must not change until it settles.
 */
export async function stringifyInSlices(value: unknown, slicing: Slicing): Promise<string | undefined> {
  const text = stringifyLarge(value, slicing);
  return typeof text === "string" || text === undefined ? text : await text;
}

/**
 * `JSON.stringify(value)` at once when `value` is small (the usual case: no promise, no turn),
 * else `stringifyInSlices`' promise, which begins in a turn of its own.
 */
export function stringifyLarge(value: unknown, slicing: Slicing): string | undefined | Promise<string | undefined> {
  const slice = slicing.slice ?? SLICE;
  if (typeof value !== "object" || value === null || weighs(value, slice) <= slice) return JSON.stringify(value);
  const pacer = new Pacer(slicing);
  return pacer.rest().then(async () => {
    const parts: string[] = [];
    const written = await writeValue(value, "", parts, pacer, new Set());
    return written ? parts.join("") : undefined;
  });
}

/** Appends the JSON of `value` (under `key`) to `parts`; false when it has none (undefined, a function). */
async function writeValue(value: unknown, key: string, parts: string[], pacer: Pacer, open: Set<object>): Promise<boolean> {
  if (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  if (typeof value === "string" && value.length > pacer.slice) {
    // A long string (a base64 image) a piece at a time, never cut inside a surrogate pair.
    parts.push('"');
    for (let at = 0; at < value.length; ) {
      let to = Math.min(value.length, at + pacer.slice);
      const high = value.charCodeAt(to - 1);
      const low = value.charCodeAt(to);
      if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) to += to - 1 > at ? -1 : 1;
      parts.push(JSON.stringify(value.slice(at, to)).slice(1, -1));
      at = to;
      if (pacer.add(pacer.slice)) await pacer.rest();
    }
    parts.push('"');
    return true;
  }
  if (typeof value !== "object" || value === null || weighs(value, pacer.slice) <= pacer.slice) {
    const text = JSON.stringify(value);
    if (text === undefined) return false;
    parts.push(text);
    if (pacer.add(text.length)) await pacer.rest();
    return true;
  }
  if (open.has(value)) throw new TypeError("Converting circular structure to JSON");
  open.add(value);
  if (Array.isArray(value)) {
    parts.push("[");
    let runStart = 0;
    let runWeight = 0;
    const flush = async (end: number) => {
      if (end > runStart) {
        const text = JSON.stringify(value.slice(runStart, end));
        parts.push(runStart > 0 ? "," : "", text.slice(1, -1));
        if (pacer.add(text.length)) await pacer.rest();
      }
      runWeight = 0;
    };
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const object = typeof item === "object" && item !== null;
      const w = object ? weighs(item, pacer.slice) : typeof item === "string" ? item.length + 2 : 8;
      // An item with its own toJSON is written alone: a run's native call would give it its index in the run.
      if (!object || (w <= pacer.slice && typeof (item as { toJSON?: unknown }).toJSON !== "function")) {
        runWeight += w;
        if (runWeight >= pacer.slice) {
          await flush(i + 1);
          runStart = i + 1;
        }
        continue;
      }
      await flush(i);
      if (i > 0) parts.push(",");
      if (!(await writeValue(item, String(i), parts, pacer, open))) parts.push("null");
      runStart = i + 1;
    }
    await flush(value.length);
    parts.push("]");
  } else {
    parts.push("{");
    let first = true;
    for (const k of Object.keys(value)) {
      const mark = parts.length;
      parts.push(first ? "" : ",", JSON.stringify(k), ":");
      if (await writeValue((value as Record<string, unknown>)[k], k, parts, pacer, open)) first = false;
      else parts.length = mark; // a member without JSON (undefined, a function) is left out
    }
    parts.push("}");
  }
  open.delete(value);
  return true;
}
