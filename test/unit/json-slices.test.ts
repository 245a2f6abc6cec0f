import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseInSlices, SLICE, stringifyInSlices, TOKENS, TURN_MS } from "../../src/domain/json-slices.js";

/** Counts pauses; slices of a few characters, so that small values are cut as large ones are. */
function tiny(slice = 8) {
  const seen = { pauses: 0 };
  return { seen, slicing: { slice, pause: async () => void seen.pauses++ } };
}

const json = fc.jsonValue({ maxDepth: 4 });
/** Strings full of what a cut could split: escapes, backslash runs, surrogate pairs, lone surrogates. */
const tricky = fc
  .array(fc.oneof(fc.constantFrom("\\", "\\\\", '"', "\n", "\u0001", "😀", "\ud83d", "é", "a", "\\u"), fc.string({ unit: "grapheme", maxLength: 4 })), { maxLength: 60 })
  .map((xs) => xs.join(""));

describe("parseInSlices", () => {
  it("gives what JSON.parse gives, for any JSON text, cut into slices", async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.integer({ min: 1, max: 40 }), fc.boolean(), async (value, slice, spaced) => {
        const text = spaced ? JSON.stringify(value, null, 1) : JSON.stringify(value);
        expect(await parseInSlices(text, tiny(slice).slicing)).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 400 },
    );
  });

  it("cuts long strings without splitting an escape or a surrogate pair", async () => {
    await fc.assert(
      fc.asyncProperty(tricky, fc.integer({ min: 1, max: 12 }), async (str, slice) => {
        const text = JSON.stringify({ s: str, list: [str, str] });
        expect(await parseInSlices(text, tiny(slice).slicing)).toStrictEqual(JSON.parse(text));
        expect(await stringifyInSlices({ s: str, list: [str, str] }, tiny(slice).slicing)).toBe(text);
      }),
      { numRuns: 600 },
    );
  });

  it("keeps JSON.parse's rules: __proto__ is an own key, a repeated key's last value wins", async () => {
    const text = '{"__proto__":{"x":1},"a":[1,2,3,4,5,6,7,8,9],"a":"last","b":{"__proto__":2}}';
    const parsed = (await parseInSlices(text, tiny(4).slicing)) as Record<string, unknown>;
    expect(parsed).toStrictEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(["__proto__", "a", "b"]);
  });

  it("refuses what JSON.parse refuses, empty members and trailing text included", async () => {
    for (const text of [
      '"abcdefghijklmnop',
      '["abcdefghijklmnop\\"]',
      "[1,,2]",
      "[1,2,]",
      "[,1]",
      '{"a":1,}',
      '{"a" 1}',
      "{1:2}",
      "[1,2] x",
      "[1,2",
      '["abc',
      "[1 2]",
      '{"a":[1,2,3],,"b":1}',
      "[truex]",
    ]) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError);
      await expect(parseInSlices(text, tiny(2).slicing), text).rejects.toThrow(SyntaxError);
    }
  });

  it("pauses between slices of a large text, and makes no native call on more than a slice", async () => {
    const numbers = Array.from({ length: 300_000 }, (_, i) => i % 1000);
    const image = "A".repeat(3 * SLICE);
    const text = JSON.stringify({ n: numbers, nested: [{ deep: numbers.slice(0, 200_000) }], image });
    const native = JSON.parse;
    const calls: number[] = [];
    JSON.parse = ((t: string, r?: never) => {
      calls.push(t.length);
      return native(t, r);
    }) as typeof JSON.parse;
    let pauses = 0;
    let value: unknown;
    try {
      value = await parseInSlices(text, { pause: async () => void pauses++ });
    } finally {
      JSON.parse = native;
    }
    expect(value).toStrictEqual(native(text));
    expect(pauses).toBeGreaterThanOrEqual(2);
    // Long strings too go a slice at a time.
    expect(calls.filter((n) => n > SLICE + 2)).toEqual([]);
  });
  it("gives no turn more than about its time on the wall, however costly the payload's shape", async () => {
    // 100,000 small objects and arrays: a slice of them costs far more than a slice of numbers.
    const value = { model: "m", messages: Array.from({ length: 50_000 }, (_, i) => ({ r: [i % 10], c: {} })), tools: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, [{}]])) };
    const text = JSON.stringify(value);
    // Structural characters as a scan counts them: a string (its quote), a container's open or close.
    const structural = (t: string) => t.match(/"(?:[^"\\]|\\.)*"|[{}[\]]/g)?.length ?? 0;
    // A driven wall: each native parse moves it by what the parse would cost, 1 ms per 500
    // structural characters and per 50,000 characters.
    let wall = 0;
    const native = JSON.parse;
    const calls: number[] = [];
    JSON.parse = ((t: string, r?: never) => {
      const n = structural(t);
      calls.push(n);
      wall += n / 500 + t.length / 50_000;
      return native(t, r);
    }) as typeof JSON.parse;
    const turns: number[] = [];
    let since = 0;
    let parsed: unknown;
    try {
      parsed = await parseInSlices(text, {
        now: () => wall,
        pause: async () => {
          turns.push(wall - since);
          since = wall;
        },
      });
    } finally {
      JSON.parse = native;
    }
    turns.push(wall - since);
    expect(parsed).toStrictEqual(native(text));
    // No native call on more than about TOKENS structural characters (one more each side: the run's brackets).
    expect(calls.filter((n) => n > TOKENS + 2)).toEqual([]);
    // A turn ends once TURN_MS have passed: it holds at most that and one native call's cost.
    const oneCall = (TOKENS + 2) / 500 + SLICE / 50_000;
    expect(Math.max(...turns)).toBeLessThanOrEqual(TURN_MS + oneCall);
    expect(turns.length).toBeGreaterThan(wall / (TURN_MS + oneCall));
  });
});

describe("stringifyInSlices", () => {
  it("gives what JSON.stringify gives, for any JSON value, cut into slices", async () => {
    await fc.assert(
      fc.asyncProperty(json, fc.integer({ min: 1, max: 40 }), async (value, slice) => {
        expect(await stringifyInSlices(value, tiny(slice).slicing)).toBe(JSON.stringify(value));
      }),
      { numRuns: 400 },
    );
  });

  it("keeps JSON.stringify's rules: toJSON with its key, undefined and functions, holes", async () => {
    const seenKeys: string[] = [];
    const withKey = { toJSON: (k: string) => (seenKeys.push(k), `key ${k}`) };
    const value = {
      date: new Date(0),
      skipped: undefined,
      fn: () => 1,
      list: [1, undefined, () => 2, withKey, new Date(1), "x".repeat(20)],
      // eslint-disable-next-line no-sparse-arrays
      holes: [1, , 3],
      nested: { withKey, long: "y".repeat(30) },
    };
    const expected = JSON.stringify(value);
    const expectedKeys = [...seenKeys];
    seenKeys.length = 0;
    expect(await stringifyInSlices(value, tiny(4).slicing)).toBe(expected);
    expect(seenKeys).toEqual(expectedKeys);
    expect(await stringifyInSlices(undefined, tiny(4).slicing)).toBeUndefined();
  });

  it("throws where JSON.stringify throws: a cycle through a large value, a BigInt", async () => {
    const big: Record<string, unknown> = { list: Array.from({ length: 50 }, (_, i) => i) };
    big.self = { again: big };
    await expect(stringifyInSlices(big, tiny(8).slicing)).rejects.toThrow(TypeError);
    await expect(stringifyInSlices({ list: Array.from({ length: 50 }, (_, i) => i), n: 1n }, tiny(8).slicing)).rejects.toThrow(TypeError);
  });

  it("pauses between slices of a large value, and makes no native call on more than a slice", async () => {
    const numbers = Array.from({ length: 300_000 }, (_, i) => i % 1000);
    const image = "A".repeat(3 * SLICE);
    const value = { n: numbers, nested: [{ deep: numbers.slice(0, 200_000) }], image };
    const native = JSON.stringify;
    const outputs: number[] = [];
    JSON.stringify = ((v: unknown, r?: never, s?: never) => {
      const out = native(v, r, s);
      outputs.push(out?.length ?? 0);
      return out;
    }) as typeof JSON.stringify;
    let pauses = 0;
    let text: string | undefined;
    try {
      text = await stringifyInSlices(value, { pause: async () => void pauses++ });
    } finally {
      JSON.stringify = native;
    }
    expect(text).toBe(native(value));
    expect(pauses).toBeGreaterThanOrEqual(2);
    expect(outputs.filter((n) => n > SLICE + 64)).toEqual([]);
  });
});
