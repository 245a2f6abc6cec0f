import { describe, expect, it } from "vitest";
import { LoopSlicer } from "../../src/domain/openai/bounds.js";

describe("LoopSlicer, on the time it is given", () => {
  it("lets the loop turn once the slice of the given wall time has passed, and not before", async () => {
    let t = 1_000;
    const turns: Array<() => void> = [];
    const slicer = new LoopSlicer({ now: () => t, nextTurn: (fn) => void turns.push(fn) }, 10);
    await slicer.tick();
    t += 9;
    await slicer.tick();
    expect(turns).toHaveLength(0);
    t += 1;
    let ticked = false;
    const tick = slicer.tick().then(() => (ticked = true));
    await Promise.resolve();
    expect(turns).toHaveLength(1);
    expect(ticked).toBe(false);
    turns[0]!();
    await tick;
    // The slice counts again from the turn.
    t += 9;
    await slicer.tick();
    expect(turns).toHaveLength(1);
  });
});
