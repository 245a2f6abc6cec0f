import { describe, expect, it } from "vitest";
import { QueueIndex } from "../../src/store/queue-index.js";

/** The queue's ids in order, read by taking each from the front (which empties it). */
const order = (q: QueueIndex): string[] => {
  const ids: string[] = [];
  for (let id = q.first(); id !== undefined; id = q.first()) {
    ids.push(id);
    q.remove(id);
  }
  return ids;
};

describe("QueueIndex", () => {
  it("keeps jobs in queue order, whatever order they come and leave in, and counts what may scale", () => {
    const q = new QueueIndex();
    q.put("c", 3, false);
    q.put("a", 1, false);
    q.put("d", 4, true);
    q.put("b", 2, false);
    expect(q.demand).toBe(3);
    q.remove("c");
    expect(q.demand).toBe(2);
    expect(order(q)).toEqual(["a", "b", "d"]);
    expect(q.demand).toBe(0);
  });

  it("takes a job as soon as it comes, job after job, without new arrays each time (each /run on an idle worker)", () => {
    const q = new QueueIndex();
    const arrays = () => [(q as unknown as { seqs: number[] }).seqs, (q as unknown as { ids: string[] }).ids];
    const seen = new Set<unknown>();
    for (let i = 1; i <= 5000; i++) {
      q.put(`job-${i}`, i, false);
      expect(q.first()).toBe(`job-${i}`);
      q.remove(`job-${i}`);
      for (const a of arrays()) seen.add(a);
    }
    expect(q.first()).toBeUndefined();
    expect(q.demand).toBe(0);
    // New arrays only when what has left is dropped, once past 1,024 entries: a few in 5,000 jobs.
    expect(seen.size).toBeLessThanOrEqual(2 * 5);
    q.put("next", 5001, false);
    expect(q.first()).toBe("next");
  });
});
