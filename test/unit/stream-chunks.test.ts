import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StreamItem } from "../../src/domain/job.js";
import { STREAM_CHUNK_MAX_BYTES } from "../../src/domain/limits.js";
import { joinStreamItems, splitStreamOutput } from "../../src/domain/stream-chunks.js";

const MB = 1024 * 1024;

/** Bytes of an item as `/stream` sends it. */
const size = (item: StreamItem) => Buffer.byteLength(JSON.stringify(item));

/** What a client does with the pieces (the recipe of docs/limits.md). */
function join(items: StreamItem[]): unknown {
  if (items.length === 1 && items[0]!.metrics === undefined) return items[0]!.output;
  const sorted = [...items].sort((a, b) => Number(a.metrics!.chunk) - Number(b.metrics!.chunk));
  const text = sorted.map((i) => i.output as string).join("");
  return sorted[0]!.metrics!.encoding === "json" ? JSON.parse(text) : text;
}

function expectWellFormed(items: StreamItem[], maxBytes: number) {
  for (const [i, item] of items.entries()) {
    expect(size(item), `item ${i}`).toBeLessThanOrEqual(maxBytes);
    if (items.length > 1) expect(item.metrics).toMatchObject({ chunk: i, chunks: items.length });
  }
}

describe("stream chunks of at most 1 MB", () => {
  it("keeps an output that fits as one item, as it was yielded", () => {
    const output = { text: ["hello"], tokens: 1 };
    expect(splitStreamOutput(output)).toEqual([{ output }]);
    const almost = "y".repeat(STREAM_CHUNK_MAX_BYTES - 100);
    expect(splitStreamOutput(almost)).toEqual([{ output: almost }]);
  });

  it("splits a large string into text pieces under 1 MB that join back", () => {
    const output = "abc😀é\"\\\n\u0001中".repeat(300_000); // ~6 MB of mixed widths and escapes
    const items = splitStreamOutput(output);
    expect(items.length).toBeGreaterThan(4);
    expectWellFormed(items, STREAM_CHUNK_MAX_BYTES);
    expect(items.every((i) => i.metrics?.encoding === "text" && typeof i.output === "string")).toBe(true);
    // Nearly full pieces: the split wastes little.
    expect(size(items[0]!)).toBeGreaterThan(STREAM_CHUNK_MAX_BYTES - 1024);
    expect(join(items)).toBe(output);
  });

  it("never cuts a surrogate pair, so each piece is valid text on its own", () => {
    const items = splitStreamOutput("😀".repeat(MB));
    expectWellFormed(items, STREAM_CHUNK_MAX_BYTES);
    for (const item of items) expect((item.output as string).isWellFormed()).toBe(true);
  });

  it("splits a large object into pieces of its JSON text that parse back to the same value", () => {
    const output = { frames: Array.from({ length: 40_000 }, (_, i) => ({ i, label: `frame ${i} «ü»`, data: [i, i / 3, null, true] })) };
    const items = splitStreamOutput(output);
    expect(items.length).toBeGreaterThan(1);
    expectWellFormed(items, STREAM_CHUNK_MAX_BYTES);
    expect(items.every((i) => i.metrics?.encoding === "json")).toBe(true);
    expect(join(items)).toEqual(output);
  });

  it("holds for any string or JSON value (property, with a small chunk size)", () => {
    const maxBytes = 1024;
    const json = fc.jsonValue();
    const text = fc.oneof(fc.string({ unit: "binary", maxLength: 3000 }), fc.string({ unit: "grapheme", maxLength: 2000 }), fc.string({ maxLength: 5000 }));
    fc.assert(
      fc.property(fc.oneof(text, json), (output) => {
        const items = splitStreamOutput(output, maxBytes);
        expectWellFormed(items, maxBytes);
        expect(join(items)).toEqual(JSON.parse(JSON.stringify(output)));
      }),
      { numRuns: 400 },
    );
  });

  it("stays under the limit for text full of lone surrogates", () => {
    const maxBytes = 1024;
    // A lone high surrogate before another character is escaped as \udXXX: 6 bytes, not half of 4.
    for (const output of ["\ud800a".repeat(10_000), "\ud800\ud800".repeat(10_000), "\udc00".repeat(10_000), "\udc00\ud800".repeat(10_000)]) {
      const items = splitStreamOutput(output, maxBytes);
      expectWellFormed(items, maxBytes);
      expect(join(items)).toBe(output);
    }
    fc.assert(
      fc.property(fc.array(fc.constantFrom("\ud800", "\udc00", "\ud800a", "a", "\ud83d\ude00", "\u0000", '"'), { minLength: 200, maxLength: 2000 }), (parts) => {
        const output = parts.join("");
        const items = splitStreamOutput(output, maxBytes);
        expectWellFormed(items, maxBytes);
        expect(join(items)).toBe(output);
      }),
      { numRuns: 300 },
    );
  });

  it("gives back what was yielded from the items, split ones joined (a streamed job's output)", () => {
    const big = "x".repeat(3 * MB);
    const bigObject = { text: "y".repeat(2 * MB) };
    const outputs = ["small", big, { n: 1 }, bigObject, 7];
    expect(joinStreamItems(outputs.flatMap((o) => splitStreamOutput(o)))).toEqual(outputs);
  });
});
