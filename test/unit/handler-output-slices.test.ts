import { describe, expect, it } from "vitest";
import { runHandler } from "../../src/domain/handlers/run.js";
import type { HandlerContext } from "../../src/domain/handlers/types.js";
import { TURN_MS } from "../../src/domain/json-slices.js";

/**
 * A handler's large output is written a slice at a time, and a turn of the event loop also ends
 * once it has taken `TURN_MS` of the wall's time: an output of a costly shape (many small objects)
 * holds no turn much longer than that, however few characters a slice has.
 */
describe("runHandler's output", () => {
  it("pauses by the wall's time, not only by size", async () => {
    // An object of 60,000 keys: each member is a native call of its own, a slice is thousands of them.
    const output = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, { r: [i % 10], c: {} }]));
    // A driven wall: each native stringify moves it by 5 µs, and 1 ms per 50,000 characters it writes.
    let wall = 0;
    const native = JSON.stringify;
    JSON.stringify = ((v: unknown, r?: never, s?: never) => {
      const text = native(v, r, s);
      wall += 0.005 + (text?.length ?? 0) / 50_000;
      return text;
    }) as typeof JSON.stringify;
    const turns: number[] = [];
    let since = 0;
    const ctx = { signal: new AbortController().signal } as unknown as HandlerContext;
    let outcome;
    try {
      outcome = await runHandler(
        () => output,
        {},
        ctx,
        { chunk: () => {} },
        async () => {
          turns.push(wall - since);
          since = wall;
        },
        () => wall,
      );
    } finally {
      JSON.stringify = native;
    }
    turns.push(wall - since);
    expect(outcome.ok).toBe(true);
    // The turn's time and one member's cost at most (without the wall: a slice of members, about 170 ms here).
    expect(Math.max(...turns)).toBeLessThanOrEqual(TURN_MS + 1);
    expect(turns.length).toBeGreaterThan(wall / (TURN_MS + 1));
  });
});
