// Once the emulator has closed (or restarts), a request that still arrives on a kept-alive
// connection is released at once with the same cause, not held until the server cuts it: a
// `minipod worker` following a restart would otherwise take the old minipod's answer for the new one's.
import { describe, expect, it } from "vitest";
import { CLOSING_CAUSE, JobNotifier, RESTARTING_CAUSE } from "../../src/domain/notifier.js";

describe("JobNotifier after the emulator closed", () => {
  for (const cause of [CLOSING_CAUSE, RESTARTING_CAUSE]) {
    it(`releases a watch made after releaseAll(${JSON.stringify(cause)}) at once, with that cause`, async () => {
      const n = new JobNotifier();
      n.releaseAll(cause, 42);
      const seen: Array<{ id: string; cause: string | undefined; at: number }> = [];
      n.watch("late", (c) => seen.push({ id: c.id, cause: c.cause, at: c.at }));
      await Promise.resolve();
      expect(seen).toEqual([{ id: "late", cause, at: 42 }]);
    });
  }

  it("does not call a watch that was dropped before its release", async () => {
    const n = new JobNotifier();
    n.releaseAll(CLOSING_CAUSE, 1);
    const seen: string[] = [];
    n.watch("dropped", (c) => seen.push(c.id))();
    await Promise.resolve();
    expect(seen).toEqual([]);
  });

  it("holds watches after a reset, which is not an end", async () => {
    const n = new JobNotifier();
    n.releaseAll("emulator reset", 1);
    const seen: string[] = [];
    n.watch("held", (c) => seen.push(c.id));
    await Promise.resolve();
    expect(seen).toEqual([]);
  });
});
