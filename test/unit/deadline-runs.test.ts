import { describe, expect, it } from "vitest";
import { DeadlineRuns } from "../../src/store/deadline-runs.js";

/** Entries valid while `live` has their id at that deadline. */
const liveness = (live: Map<string, number>) => (id: string, at: number) => live.get(id) === at;

describe("deadlines of the jobs held in memory, in runs", () => {
  it("gives the due ones earliest first across runs of deadlines that came out of order, and the deadline after them", () => {
    const runs = new DeadlineRuns();
    const live = new Map<string, number>();
    // Three kinds interleaved, each in order: retention of /run (+30 min), of /runsync (+1 min), a queued job's ttl (+24 h).
    for (let t = 0; t < 100; t++) {
      for (const [kind, after] of [["run", 1_800_000], ["sync", 60_000], ["ttl", 86_400_000]] as const) {
        live.set(`${kind}${t}`, t + after);
        runs.add(`${kind}${t}`, t + after);
      }
    }
    expect(runs.size).toBe(300);
    expect(runs.due(59_999, 10, liveness(live))).toEqual({ ids: [], next: 60_000 });
    expect(runs.due(60_002, 10, liveness(live))).toEqual({ ids: ["sync0", "sync1", "sync2"], next: 60_003 });
    // More due than asked for: the batch, and `now` as what comes next.
    const many = runs.due(1_800_001, 101, liveness(live));
    expect(many.ids.length).toBe(101);
    expect(many.ids.slice(98)).toEqual(["sync98", "sync99", "run0"]);
    expect(many.next).toBe(1_800_001);
  });

  it("skips an entry whose job left or changed, and drops it once met at a run's head or compacted", () => {
    const runs = new DeadlineRuns();
    const live = new Map<string, number>([["a", 10], ["b", 20], ["c", 30]]);
    for (const [id, at] of live) runs.add(id, at);
    // c changed (a new deadline, added again), a left.
    live.set("c", 35);
    runs.add("c", 35);
    live.delete("a");
    expect(runs.due(100, 10, liveness(live))).toEqual({ ids: ["b", "c"], next: Infinity });
    expect(runs.size).toBe(3); // a, at the head, dropped; c's old entry, behind b, stays until compacted
    runs.compact(liveness(live));
    expect(runs.size).toBe(2);
    expect(runs.due(21, 10, liveness(live))).toEqual({ ids: ["b"], next: 35 });
  });

  it("gives a due job again while it stays as it is, and leaves out deadlines of Infinity", () => {
    const runs = new DeadlineRuns();
    const live = new Map<string, number>([["a", 5]]);
    runs.add("a", 5);
    runs.add("never", Infinity);
    expect(runs.due(5, 1, liveness(live)).ids).toEqual(["a"]);
    expect(runs.due(5, 1, liveness(live)).ids).toEqual(["a"]);
    expect(runs.size).toBe(1);
  });

  it("merges into one run, in order, when deadlines keep coming out of order", () => {
    const runs = new DeadlineRuns();
    const live = new Map<string, number>();
    // Each deadline earlier than the one before: a run each, until they are merged.
    for (let i = 0; i < 40; i++) {
      live.set(`j${i}`, 1000 - i);
      runs.add(`j${i}`, 1000 - i);
    }
    const due = runs.due(2000, 40, liveness(live));
    expect(due.ids).toEqual(Array.from({ length: 40 }, (_, i) => `j${39 - i}`));
    expect(due.next).toBe(Infinity);
    expect((runs as unknown as { runs: unknown[] }).runs.length).toBeLessThanOrEqual(16);
  });
});
