/**
 * The JSON text of a large payload, made once: a job's input is written to SQLite and copied for
 * its handler, and an output is copied from the handler and written, each a `JSON.stringify` of
 * the whole value; for a 10 MB input, each one blocks the event loop as long as parsing it did.
 * Only texts past `LARGE` are kept, by the object they were made from (so for as long as it
 * lives, and a payload is not changed once submitted or returned), never a small job's: those
 * stay in memory, and their text would double it.
 */
const LARGE = 64 * 1024;
const texts = new WeakMap<object, string>();

/** `JSON.stringify(value)`, from the text kept for it when there is one. */
export function jsonText(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const kept = texts.get(value);
  if (kept !== undefined) return kept;
  const text = JSON.stringify(value);
  if (text.length > LARGE) texts.set(value, text);
  return text;
}

/**
 * A copy of a JSON value (`JSON.parse` of its text), whose text is kept for the copy. Not for
 * `value` itself: that may be a handler's, which it may change and return again.
 */
export function jsonCopy<T>(value: T): T {
  const text = (typeof value === "object" && value !== null ? texts.get(value) : undefined) ?? JSON.stringify(value);
  const copy = JSON.parse(text) as T;
  if (text.length > LARGE && typeof copy === "object" && copy !== null) texts.set(copy, text);
  return copy;
}

/** The text kept for a value (only a large payload's: see `LARGE`), if any. */
export function keptText(value: unknown): string | undefined {
  return typeof value === "object" && value !== null ? texts.get(value) : undefined;
}
