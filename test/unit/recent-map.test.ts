import { describe, expect, it } from "vitest";
import { RecentMap } from "../../src/domain/recent-map.js";

describe("RecentMap", () => {
  it("keeps the keys added last, drops the first added, and leaves a key in its place when its value changes", () => {
    const m = new RecentMap<string, number>(3);
    m.set("a", 1);
    m.set("b", 2);
    m.set("c", 3);
    m.set("a", 10); // already there: its value changes, its place does not
    expect(m.get("a")).toBe(10);
    m.set("d", 4); // "a" was added first
    expect(m.has("a")).toBe(false);
    expect([m.get("b"), m.get("c"), m.get("d"), m.size]).toEqual([2, 3, 4, 3]);
    m.delete("c");
    expect([m.has("c"), m.size]).toEqual([false, 2]);
    m.clear();
    expect(m.size).toBe(0);
    m.set("x", 1);
    expect(m.get("x")).toBe(1);
  });

  it("holds exactly the last `limit` keys added, like a first-in first-out cache, and never more with deletions", () => {
    const limit = 16;
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // Without deletions: exactly the last `limit` keys that were new when added.
    const m = new RecentMap<number, number>(limit);
    const order: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const key = Math.floor(random() * 40);
      if (!m.has(key)) order.push(key);
      m.set(key, i);
      const kept = new Set(order.slice(-limit));
      expect(m.size).toBe(kept.size);
      for (const k of kept) expect(m.get(k)).toBeDefined();
    }
    // With deletions: never more than the limit, and a deleted key is gone.
    const d = new RecentMap<number, number>(limit);
    for (let i = 0; i < 5000; i++) {
      const key = Math.floor(random() * 40);
      if (random() < 0.2) {
        d.delete(key);
        expect(d.has(key)).toBe(false);
      } else {
        d.set(key, i);
        expect(d.get(key)).toBe(i);
      }
      expect(d.size).toBeLessThanOrEqual(limit);
    }
  });

  it("refuses a limit below one", () => {
    expect(() => new RecentMap(0)).toThrow(/at least one key/);
  });
});
