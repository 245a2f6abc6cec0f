/**
 * The JSON text of a large payload, made once: a job's input is written to SQLite and copied for
 * its handler, and an output is copied from the handler and written, each a `JSON.stringify` of
 * the whole value; for a 10 MB input, each one blocks the event loop as long as parsing it did.
 * Only texts past `LARGE` are kept, by the object they were made from (so for as long as it
 * lives, and a payload is not changed once submitted or returned), never a small job's: those
 * stay in memory, and their text would double it.
 */
export const LARGE = 64 * 1024;
const texts = new WeakMap<object, string>();

/**
 * A JSON value held as its text, never parsed on the event loop: a large job input arrives as
 * text (parsed, checked and cut out of its request off the event loop), is written to SQLite as
 * it came, handed to a worker process inside the text of its `job-take` answer, and parsed only
 * where a handler in this process needs the value. `stringify` writes it into any answer as it is;
 * `JSON.stringify` parses it (see `toJSON`), so a place that misses it is slow, never wrong.
 */
export class RawJson {
  constructor(private readonly raw: string) {}

  /** The JSON text. */
  get text(): string {
    return this.raw;
  }

  /** The text's length, known without reading it where the text is elsewhere (a stored payload's). */
  get size(): number {
    return this.raw.length;
  }

  /**
   * Makes `text` ready to read without a long read on the event loop: undefined when it is (the
   * text is here); a stored payload's is read a part a turn (see StoredJson).
   */
  preload(): Promise<void> | undefined {
    return undefined;
  }

  /** The text in consecutive pieces (a stored payload's parts, as read), joined by no one. */
  pieces(): readonly string[] {
    return [this.text];
  }

  /** The value, parsed: what `JSON.stringify` writes for it outside `stringify`. */
  toJSON(): unknown {
    if (splicing !== undefined) {
      splicing.push(this);
      return `${MARK}${splicing.length - 1}`;
    }
    return JSON.parse(this.text);
  }
}

/** A marker no JSON string of a caller's holds (a fresh random part each process). */
const MARK = `\u{10FFFF}raw-${Math.random().toString(36).slice(2)}-`;
const MARKED = new RegExp(`"${MARK.replace(/[-\\^$*+?.()|[\]{}]/g, "\\$&")}(\\d+)"`, "g");
/** The texts (or `RawJson`s) `stringify` splices in, while it runs. */
let splicing: Array<string | RawJson> | undefined;

/**
 * `JSON.stringify(value)`, with every `RawJson` inside written as its text and every value whose
 * large text is kept (see `jsonText`) written from that text: the work is the small part's alone.
 * A value whose text was spliced must not have changed since (payloads are not changed once
 * submitted or returned).
 */
export function stringify(value: unknown): string {
  const body = stringifyBody(value);
  return typeof body === "string" ? body : body.join("");
}

/**
 * `stringify`'s text: one string, or consecutive pieces when a large payload was spliced in, the
 * spliced texts among them as they are (a stored payload's parts included): an answer written a
 * piece at a time never copies a large payload into one string first.
 */
export function stringifyBody(value: unknown): string | readonly string[] {
  const outer = splicing;
  const spliced: Array<string | RawJson> = [];
  splicing = spliced;
  let out: string;
  try {
    out = JSON.stringify(value, keptReplacer);
  } finally {
    splicing = outer;
  }
  if (spliced.length === 0) return out;
  const pieces: string[] = [];
  let from = 0;
  MARKED.lastIndex = 0;
  for (let m = MARKED.exec(out); m !== null; m = MARKED.exec(out)) {
    if (m.index > from) pieces.push(out.slice(from, m.index));
    const raw = spliced[Number(m[1])]!;
    if (typeof raw === "string") pieces.push(raw);
    else for (const p of raw.pieces()) pieces.push(p);
    from = m.index + m[0].length;
  }
  if (from < out.length) pieces.push(out.slice(from));
  return pieces;
}

function keptReplacer(this: unknown, _key: string, value: unknown): unknown {
  if (splicing === undefined || typeof value !== "object" || value === null) return value;
  const kept = texts.get(value);
  if (kept === undefined) return value;
  splicing.push(kept);
  return `${MARK}${splicing.length - 1}`;
}

/** `JSON.stringify(value)`, from the text kept for it when there is one (a `RawJson`'s own text). */
export function jsonText(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (value instanceof RawJson) return value.text;
  const kept = texts.get(value);
  if (kept !== undefined) return kept;
  const text = JSON.stringify(value);
  if (text.length > LARGE) texts.set(value, text);
  return text;
}

/** The text kept for a value (a large payload's: see `LARGE`; a `RawJson`'s own), if any. */
export function keptText(value: unknown): string | undefined {
  if (value instanceof RawJson) return value.text;
  return typeof value === "object" && value !== null ? texts.get(value) : undefined;
}

/** The value of `v`: a `RawJson`'s parsed, anything else as it is. */
export const valueOf = (v: unknown): unknown => (v instanceof RawJson ? JSON.parse(v.text) : v);

/** A value read back from its stored text: a large one stays text (`RawJson`), a small one is parsed. */
export const fromText = (text: string): unknown => (text.length > LARGE ? new RawJson(text) : JSON.parse(text));

/**
 * Settles once the large payloads among `values` are ready to write (see `RawJson.preload`);
 * undefined, at once, when none needs reading: the usual case costs no turn.
 */
export function preloaded(...values: unknown[]): Promise<void> | undefined {
  if (values.length === 1 && !(values[0] instanceof RawJson)) return undefined; // a /status poll
  let waits: Promise<void>[] | undefined;
  for (const v of values) {
    const w = v instanceof RawJson ? v.preload() : undefined;
    if (w) (waits ??= []).push(w);
  }
  return waits && Promise.all(waits).then(() => undefined);
}
