import { RunStop } from "../../src/domain/run-stop.js";
import { describe, expect, it, vi } from "vitest";
import { VIRTUAL_TIME_MAX_MS } from "../../src/domain/bounds.js";
import { VirtualClock } from "../../src/domain/clock.js";
import { ProcessWall } from "../../src/compose/process-wall.js";
import { FakeWall } from "../support/fake-wall.js";

const manual = (start = 1_000_000) => new VirtualClock({ mode: "manual", start, wall: new ProcessWall(() => {}) });

describe("VirtualClock (manual)", () => {
  it("moves only when advanced, by exactly the amount asked", async () => {
    const clock = manual();
    expect(clock.now()).toBe(1_000_000);
    await clock.advance(1234);
    expect(clock.now()).toBe(1_001_234);
    await clock.advance(0);
    expect(clock.now()).toBe(1_001_234);
  });

  it("fires due timers in time order, ties in insertion order, with now set to each due time", async () => {
    const clock = manual(0);
    const seen: string[] = [];
    clock.after(30, () => seen.push(`c@${clock.now()}`));
    clock.after(10, () => seen.push(`a@${clock.now()}`));
    clock.after(10, () => seen.push(`b@${clock.now()}`));
    clock.after(31, () => seen.push("late"));
    await clock.advance(30);
    expect(seen).toEqual(["a@10", "b@10", "c@30"]);
    expect(clock.pending()).toBe(1);
  });

  it("runs timers created on the way when they fall inside the advance", async () => {
    const clock = manual(0);
    const seen: number[] = [];
    clock.after(10, () => clock.after(5, () => seen.push(clock.now())));
    await clock.advance(20);
    expect(seen).toEqual([15]);
  });

  it("lets held work started by a timer settle before the next timer fires", async () => {
    const clock = manual(0);
    const seen: string[] = [];
    clock.after(10, () => {
      const release = clock.hold();
      void (async () => {
        await Promise.resolve();
        await new Promise((r) => setImmediate(r));
        seen.push("work done");
        clock.after(0, () => seen.push(`follow-up@${clock.now()}`));
        release();
      })();
    });
    clock.after(11, () => seen.push("next timer"));
    await clock.advance(11);
    expect(seen).toEqual(["work done", "follow-up@10", "next timer"]);
  });

  it("runs promise chains started by a timer to their end before the next timer", async () => {
    const clock = manual(0);
    const seen: string[] = [];
    clock.after(10, () => {
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => seen.push("chain done"));
    });
    clock.after(11, () => seen.push("next timer"));
    await clock.advance(11);
    expect(seen).toEqual(["chain done", "next timer"]);
  });

  it("waits for held work (real I/O inside a handler) before answering", async () => {
    const clock = manual(0);
    let done = false;
    clock.after(5, () => {
      const release = clock.hold();
      setTimeout(() => {
        done = true;
        release();
      }, 20);
    });
    await clock.advance(5);
    expect(done).toBe(true);
  });

  it("a run's sleep resolves on the virtual clock; stopping the run rejects it and leaves no timer", async () => {
    const clock = manual(0);
    const run = new RunStop(clock);
    let woke = -1;
    void run.sleep(100).then(() => (woke = clock.now()));
    await clock.advance(99);
    expect(woke).toBe(-1);
    await clock.advance(1);
    expect(woke).toBe(100);
    const slept = run.sleep(100);
    run.stop(new Error("stop"));
    await expect(slept).rejects.toThrow("stop");
    expect(clock.pending()).toBe(0);
    expect(run.signal.aborted).toBe(true); // made after the stop: already aborted
    await expect(run.sleep(1)).rejects.toThrow("stop");
  });

  it("cancels timers and ignores unknown handles", async () => {
    const clock = manual(0);
    let fired = false;
    const t = clock.after(10, () => (fired = true));
    clock.cancel(t);
    clock.cancel(t);
    clock.cancel(undefined);
    await clock.advance(100);
    expect(fired).toBe(false);
  });

  it("does not keep cancelled timers: a timeout re-armed after every job stays one timer", async () => {
    const clock = manual(0);
    const fired: number[] = [];
    // Timers that do fire, spread among the cancelled ones, keep their order.
    for (let k = 0; k < 50; k++) clock.at(1_000 + k * 10, () => fired.push(k));
    let idle = clock.after(3_600_000, () => fired.push(-1));
    for (let job = 0; job < 100_000; job++) {
      clock.cancel(idle);
      idle = clock.after(3_600_000 + job, () => fired.push(-1));
    }
    expect(clock.pending()).toBe(51);
    expect(clock.heapSize).toBeLessThan(2_000);
    await clock.advance(2_000);
    expect(fired).toEqual(Array.from({ length: 50 }, (_, k) => k));
    clock.cancel(idle);
    await clock.advance(4_000_000);
    expect(fired).toHaveLength(50);
    expect(clock.heapSize).toBe(0);
  });

  it("keeps going when a timer throws, and reports it", async () => {
    const errors: string[] = [];
    const clock = new VirtualClock({ mode: "manual", start: 0, onError: (e, label) => errors.push(`${label}: ${(e as Error).message}`), wall: new ProcessWall(() => {}) });
    let after = false;
    clock.after(1, () => {
      throw new Error("boom");
    }, "bad");
    clock.after(2, () => (after = true));
    await clock.advance(5);
    expect(errors).toEqual(["bad: boom"]);
    expect(after).toBe(true);
  });

  it("serialises concurrent advances", async () => {
    const clock = manual(0);
    const seen: number[] = [];
    for (const at of [5, 15, 25]) clock.at(at, () => seen.push(clock.now()));
    await Promise.all([clock.advance(10), clock.advance(10), clock.advance(10)]);
    expect(clock.now()).toBe(30);
    expect(seen).toEqual([5, 15, 25]);
  });

  it("refuses a negative advance", async () => {
    await expect(manual().advance(-1)).rejects.toThrow(RangeError);
  });

  it("advances 7 days over 10,000 timers in order", async () => {
    const clock = manual(0);
    const seen: number[] = [];
    const day = 86_400_000;
    for (let i = 0; i < 10_000; i++) clock.at((i * 7919) % (7 * day), () => seen.push(clock.now()));
    await clock.advance(7 * day);
    expect(seen).toHaveLength(10_000);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
  });
});

describe("VirtualClock (real)", () => {
  it("follows the wall clock, scaled by speed, and fires timers by itself", async () => {
    const clock = new VirtualClock({ mode: "real", speed: 1000, start: 0, wall: new ProcessWall(() => {}) });
    const fired = new Promise<number>((resolve) => clock.after(5_000, () => resolve(clock.now())));
    const at = await fired; // 5 virtual seconds at ×1000 is about 5 wall ms
    expect(at).toBeGreaterThanOrEqual(5_000);
    clock.stop();
  });

  it("can skip ahead with advance", async () => {
    const clock = new VirtualClock({ mode: "real", start: 0, wall: new ProcessWall(() => {}) });
    let fired = false;
    clock.after(60_000, () => (fired = true));
    await clock.advance(60_000);
    expect(fired).toBe(true);
    expect(clock.now()).toBeGreaterThanOrEqual(60_000);
    clock.stop();
  });
});

describe("VirtualClock (real), read many times at one wall reading", () => {
  it("gives the time of the current anchors, moved by advance or set between two readings", async () => {
    const wall = new FakeWall();
    const clock = new VirtualClock({ mode: "real", speed: 2, start: 0, wall });
    expect(clock.now()).toBe(0);
    wall.advance(10);
    expect([clock.now(), clock.now()]).toEqual([20, 20]);
    await clock.advance(1000);
    expect(clock.now()).toBe(1020);
    clock.set(500);
    expect(clock.now()).toBe(500);
    wall.advance(5);
    expect(clock.now()).toBe(510);
    clock.stop();
  });
});

describe("VirtualClock bounds", () => {
  it("refuses a start or a speed it cannot run with", () => {
    expect(() => new VirtualClock({ mode: "manual", start: VIRTUAL_TIME_MAX_MS + 1, wall: new ProcessWall(() => {}) })).toThrow(RangeError);
    expect(() => new VirtualClock({ mode: "manual", start: -1, wall: new ProcessWall(() => {}) })).toThrow(RangeError);
    expect(() => new VirtualClock({ mode: "manual", start: Number.NaN, wall: new ProcessWall(() => {}) })).toThrow(RangeError);
    expect(() => new VirtualClock({ mode: "real", speed: 1e13, wall: new ProcessWall(() => {}) })).toThrow(/speed must be above 0 and at most 1000000/);
    expect(() => new VirtualClock({ mode: "real", speed: 0, wall: new ProcessWall(() => {}) })).toThrow(RangeError);
    expect(new VirtualClock({ mode: "manual", start: VIRTUAL_TIME_MAX_MS, wall: new ProcessWall(() => {}) }).now()).toBe(VIRTUAL_TIME_MAX_MS);
  });

  it("refuses to advance past the end of virtual time, changing nothing, and still advances after", async () => {
    const clock = manual(VIRTUAL_TIME_MAX_MS - 1000);
    const seen: number[] = [];
    clock.after(500, () => seen.push(clock.now()));
    await expect(clock.advance(1001)).rejects.toThrow(/would pass the latest virtual time, 9999-01-01T00:00:00.000Z; at most 1000 ms are left/);
    expect(clock.now()).toBe(VIRTUAL_TIME_MAX_MS - 1000);
    expect(seen).toEqual([]);
    expect(clock.remaining()).toBe(1000);
    await clock.advance(1000);
    expect(seen).toEqual([VIRTUAL_TIME_MAX_MS - 500]);
    expect(clock.now()).toBe(VIRTUAL_TIME_MAX_MS);
    await expect(clock.advance(1)).rejects.toThrow(RangeError);
    await clock.advance(0);
  });

  it("on the real clock, arms no wall timer for timers after the end of time once it is reached", async () => {
    vi.useFakeTimers();
    try {
      const clock = new VirtualClock({ mode: "real", speed: 1_000_000, start: VIRTUAL_TIME_MAX_MS - 1000, wall: new ProcessWall(() => {}) });
      let fired = 0;
      clock.at(VIRTUAL_TIME_MAX_MS + 1, () => fired++);
      const armed = vi.spyOn(globalThis, "setTimeout");
      // Async: a wall timer runs in a turn of its own, as a real one does (wall time is read once per run of code).
      await vi.advanceTimersByTimeAsync(1000);
      expect(clock.now()).toBe(VIRTUAL_TIME_MAX_MS);
      expect(fired).toBe(0);
      // One wall timer to reach the end, none after: no wake-up every millisecond for a timer that cannot fire.
      expect(armed.mock.calls.length).toBeLessThanOrEqual(1);
      expect(vi.getTimerCount()).toBe(0);
      clock.stop();
    } finally {
      vi.restoreAllMocks();
      vi.useRealTimers();
    }
  });

  it("on the real clock, stops at the end of virtual time", async () => {
    const clock = new VirtualClock({ mode: "real", speed: 1_000_000, start: VIRTUAL_TIME_MAX_MS - 1000, wall: new ProcessWall(() => {}) });
    await new Promise<void>((resolve) => clock.after(500, resolve));
    expect(clock.now()).toBe(VIRTUAL_TIME_MAX_MS);
    expect(clock.remaining()).toBe(0);
    clock.stop();
  });
});

describe("VirtualClock on the wall it is given", () => {
  const turns = async (n = 20) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it("starts at the wall's time when given no start", () => {
    const wall = new FakeWall();
    expect(new VirtualClock({ mode: "manual", wall }).now()).toBe(wall.now());
  });

  it("measures the settle timeout of held work on that wall", async () => {
    const wall = new FakeWall();
    const late: number[] = [];
    const clock = new VirtualClock({ mode: "manual", start: 0, wall, settleTimeoutMs: 5_000, onSettleTimeout: (holds) => late.push(holds) });
    clock.hold();
    let settled = false;
    void clock.settle().then(() => (settled = true));
    await turns();
    expect(settled).toBe(false);
    wall.advance(4_999);
    await turns();
    expect(settled).toBe(false);
    wall.advance(1);
    await turns();
    expect(late).toEqual([1]);
    expect(settled).toBe(true);
    clock.stop();
  });

  it("stop() cancels every wall timer, its readers' too, and ends a settle waiting for held work", async () => {
    const wall = new FakeWall();
    const clock = new VirtualClock({ mode: "real", start: 0, wall });
    clock.after(60_000, () => {});
    clock.wall.after(1_000, () => {});
    clock.hold();
    let settled = false;
    void clock.settle().then(() => (settled = true));
    await turns();
    expect(wall.pending).toBe(3);
    clock.stop();
    await turns();
    expect(wall.pending).toBe(0);
    expect(settled).toBe(true);
    clock.wall.after(1_000, () => {});
    expect(wall.pending).toBe(0);
  });
});
