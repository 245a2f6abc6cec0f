import type { StreamItem } from "./job.js";
import { STREAM_CHUNK_MAX_BYTES } from "./limits.js";

/** Room left in a chunk for the item's own JSON around the piece (`{"output":..,"metrics":{..}}`). */
const ENVELOPE_BYTES = 256;

/**
 * One yielded output as stream items of at most 1 MB each (serialised). An output that fits is one
 * item `{ output }`. A larger one is split: a string into consecutive substrings, anything else
 * into consecutive pieces of its JSON text; every piece carries
 * `metrics: { chunk, chunks, encoding }` (`encoding` "text" or "json"). Joining the `output`
 * strings of pieces 0..chunks-1 gives back the string, or the JSON text to parse.
 */
export function splitStreamOutput(output: unknown, maxBytes = STREAM_CHUNK_MAX_BYTES): StreamItem[] {
  const json = JSON.stringify(output) ?? "null";
  if (Buffer.byteLength(json) + 16 <= maxBytes) return [{ output: JSON.parse(json) as unknown }];
  const encoding = typeof output === "string" ? "text" : "json";
  const text = typeof output === "string" ? output : json;
  const pieces = splitByEncodedSize(text, maxBytes - ENVELOPE_BYTES);
  return pieces.map((piece, i) => ({ output: piece, metrics: { chunk: i, chunks: pieces.length, encoding } }));
}

/** Cuts `text` into pieces whose JSON-string encoding is at most `budget` bytes, never inside a surrogate pair. */
function splitByEncodedSize(text: string, budget: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  let size = 2; // the quotes
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A pair only when a high surrogate is followed by a low one: a lone one is escaped (6 bytes).
    const next = text.charCodeAt(i + 1);
    const pair = c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    const cost = pair ? 4 : encodedCost(c);
    if (size + cost > budget && i > start) {
      pieces.push(text.slice(start, i));
      start = i;
      size = 2;
    }
    size += cost;
    if (pair) i++;
  }
  pieces.push(text.slice(start));
  return pieces;
}

function encodedCost(c: number): number {
  if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c || c === 0x0a || c === 0x0d || c === 0x09) return 2;
  if (c < 0x20) return 6;
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) return 6; // a lone surrogate is escaped
  return 3;
}

/**
 * The outputs as they were yielded, from the stream items `splitStreamOutput` made of them: an
 * item without `metrics` is one output; consecutive pieces `0..chunks-1` are joined back into one.
 */
export function joinStreamItems(items: readonly StreamItem[]): unknown[] {
  const outputs: unknown[] = [];
  let pieces: string[] = [];
  for (const item of items) {
    const m = item.metrics;
    if (m === undefined || typeof m.chunk !== "number" || typeof m.chunks !== "number") {
      outputs.push(item.output);
      continue;
    }
    if (m.chunk === 0) pieces = [];
    pieces.push(String(item.output));
    if (m.chunk === m.chunks - 1) {
      const text = pieces.join("");
      outputs.push(m.encoding === "json" ? (JSON.parse(text) as unknown) : text);
      pieces = [];
    }
  }
  return outputs;
}
