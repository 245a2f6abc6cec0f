import { describe, expect, it } from "vitest";
import { DeadlineHeap } from "../../src/store/deadline-heap.js";

/** Entries valid while `live` has their id at that deadline. */
const liveness = (live: Map<string, number>) => (id: string, at: number) => live.get(id) === at;

describe("deadlines of the jobs held in memory, in a heap", () => {
  it("gives the due ones earliest first whatever order they came in, and the deadline after them", () => {
    const heap = new DeadlineHeap();
    const live = new Map<string, number>();
    // Three kinds interleaved, each in order: retention of /run (+30 min), of /runsync (+1 min), a queued job's ttl (+24 h).
    for (let t = 0; t < 100; t++) {
      for (const [kind, after] of [["run", 1_800_000], ["sync", 60_000], ["ttl", 86_400_000]] as const) {
        live.set(`${kind}${t}`, t + after);
        heap.add(`${kind}${t}`, t + after);
      }
    }
    expect(heap.size).toBe(300);
    expect(heap.due(59_999, 10, liveness(live))).toEqual({ ids: [], next: 60_000 });
    expect(heap.due(60_002, 10, liveness(live))).toEqual({ ids: ["sync0", "sync1", "sync2"], next: 60_003 });
    // More due than asked for: the batch, and `now` as what comes next.
    const many = heap.due(1_800_001, 101, liveness(live));
    expect(many.ids.length).toBe(101);
    expect(many.ids.slice(98)).toEqual(["sync98", "sync99", "run0"]);
    expect(many.next).toBe(1_800_001);
    // Random deadlines (a ttl of the caller's own a job) come out in order too.
    const random = new DeadlineHeap();
    const some = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) {
      const at = Math.floor(Math.random() * 1e6);
      some.set(`r${i}`, at);
      random.add(`r${i}`, at);
    }
    const all = random.due(1e6, 2_000, liveness(some)).ids.map((id) => some.get(id)!);
    expect(all).toEqual([...some.values()].sort((a, b) => a - b));
  });

  it("skips and drops an entry whose job left or changed, and compacts to the entries still true", () => {
    const heap = new DeadlineHeap();
    const live = new Map<string, number>([["a", 10], ["b", 20], ["c", 30]]);
    for (const [id, at] of live) heap.add(id, at);
    // c changed (a new deadline, added again), a left.
    live.set("c", 35);
    heap.add("c", 35);
    live.delete("a");
    heap.add("d", 40);
    live.set("d", 40);
    expect(heap.size).toBe(5);
    heap.compact(liveness(live));
    expect(heap.size).toBe(3);
    expect(heap.due(100, 10, liveness(live))).toEqual({ ids: ["b", "c", "d"], next: Infinity });
    // A stale entry at the top is dropped as met.
    live.delete("b");
    expect(heap.due(21, 10, liveness(live))).toEqual({ ids: [], next: 35 });
    expect(heap.size).toBe(2);
  });

  it("gives a due job again while it stays as it is, and leaves out deadlines of Infinity", () => {
    const heap = new DeadlineHeap();
    const live = new Map<string, number>([["a", 5]]);
    heap.add("a", 5);
    heap.add("never", Infinity);
    expect(heap.due(5, 1, liveness(live)).ids).toEqual(["a"]);
    expect(heap.due(5, 1, liveness(live)).ids).toEqual(["a"]);
    expect(heap.size).toBe(1);
  });
});
