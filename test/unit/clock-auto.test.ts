// The rule by which virtual time skips ahead (src/domain/activity.ts), on the auto clock and in
// stepUntil (waitForJob and runUntilIdle on the manual clock), with wall time that moves only when
// told: no real sleeps, nothing timed.
import { describe, expect, it } from "vitest";
import { stepUntil } from "../../src/domain/activity.js";
import { VirtualClock } from "../../src/domain/clock.js";
import { FakeWall } from "../support/fake-wall.js";

const START = 1_700_000_000_000;
const HOUR = 3_600_000;

function auto() {
  const wall = new FakeWall();
  const clock = new VirtualClock({ mode: "auto", start: START, wall });
  return { wall, clock };
}

/** Lets the event loop turn a few times: whatever the clock would do by itself, it has done. */
async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** Resolves when the clock fires a timer `ms` from now, with the virtual time it fired at. */
const firing = (clock: VirtualClock, ms: number) => new Promise<number>((resolve) => clock.after(ms, () => resolve(clock.now())));

/** A timer `ms` from now: `at` is when it fired (undefined before), `fired` resolves then. */
function timer(clock: VirtualClock, ms: number) {
  const t: { at: number | undefined; fired: Promise<number> } = { at: undefined, fired: undefined as unknown as Promise<number> };
  t.fired = new Promise<number>((resolve) => clock.after(ms, () => resolve((t.at = clock.now()))));
  return t;
}

describe("the auto clock", () => {
  it("follows the wall while nobody waits: a timer fires when wall time reaches it", async () => {
    const { wall, clock } = auto();
    let fired: number | undefined;
    clock.after(1000, () => (fired = clock.now()));
    await turns();
    expect(fired).toBeUndefined();
    expect(clock.now()).toBe(START);
    wall.advance(999);
    expect(fired).toBeUndefined();
    expect(clock.now()).toBe(START + 999);
    wall.advance(1);
    expect(fired).toBe(START + 1000);
    clock.stop();
  });

  it("jumps from timer to timer while someone waits and nothing runs on real time", async () => {
    const { wall, clock } = auto();
    const seen: number[] = [];
    clock.after(HOUR, () => seen.push(clock.now() - START));
    clock.after(2 * HOUR, () => seen.push(clock.now() - START));
    const done = firing(clock, 7 * 24 * HOUR);
    const release = clock.activity.waiting();
    expect(await done).toBe(START + 7 * 24 * HOUR);
    expect(seen).toEqual([HOUR, 2 * HOUR]);
    expect(wall.now()).toBe(1_000_000); // no wall time passed
    release();
    clock.stop();
  });

  it("stands still between its jumps, however long their work takes on the wall, then follows the wall from there", async () => {
    const { wall, clock } = auto();
    const seen: number[] = [];
    clock.after(1000, () => {
      wall.advance(50); // the work of this timer took 50 wall ms
      seen.push(clock.now() - START);
    });
    const release = clock.activity.waiting();
    const last = firing(clock, 1500);
    expect(await last).toBe(START + 1500);
    expect(seen).toEqual([1000]);
    release();
    await turns();
    wall.advance(10);
    expect(clock.now()).toBe(START + 1510);
    clock.stop();
  });

  it("stops jumping once the waiter is answered: a timer that answers it is the last one", async () => {
    const { clock } = auto();
    let later = false;
    const release = clock.activity.waiting();
    const answered = new Promise<void>((resolve) =>
      clock.after(10_000, () => {
        release();
        resolve();
      }),
    );
    clock.after(20_000, () => (later = true));
    await answered;
    await turns();
    expect(later).toBe(false);
    expect(clock.now()).toBe(START + 10_000);
    clock.stop();
  });

  it("does not jump while real work runs: time follows the wall, and a timeout fires only when the wall reaches it", async () => {
    const { wall, clock } = auto();
    const timeout = timer(clock, 600_000);
    const waiting = clock.activity.waiting();
    const working = clock.activity.working(); // a job on a worker process
    await turns();
    expect(timeout.at).toBeUndefined();
    wall.advance(2000); // the job really takes 2 s
    expect(clock.now()).toBe(START + 2000);
    expect(timeout.at).toBeUndefined();
    working();
    // The work ended: the waiter is alone with the timer, so time jumps to it.
    expect(await timeout.fired).toBe(START + 600_000);
    waiting();
    clock.stop();
  });

  it("counts a handler computing (a hold) as real work, and not while it sleeps on the virtual clock", async () => {
    const { clock } = auto();
    const wake = timer(clock, 5000);
    const waiting = clock.activity.waiting();
    const hold = clock.hold();
    await turns();
    expect(wake.at).toBeUndefined();
    hold();
    expect(await wake.fired).toBe(START + 5000);
    waiting();
    clock.stop();
  });

  it("asks a source each time (jobs queued for a worker process), again when told it changed", async () => {
    const { clock } = auto();
    let queued = true;
    clock.activity.addSource(() => queued);
    const ttl = timer(clock, 24 * HOUR); // the queued job's ttl
    const waiting = clock.activity.waiting();
    await turns();
    expect(ttl.at).toBeUndefined();
    queued = false;
    clock.activity.changed();
    expect(await ttl.fired).toBe(START + 24 * HOUR);
    waiting();
    clock.stop();
  });

  it("takes up jumping when a timer comes while someone waits", async () => {
    const { clock } = auto();
    const waiting = clock.activity.waiting();
    await turns();
    expect(await firing(clock, HOUR)).toBe(START + HOUR);
    waiting();
    clock.stop();
  });
});

describe("stepUntil (waitForJob and runUntilIdle moving time themselves)", () => {
  const manual = () => {
    const wall = new FakeWall();
    return { wall, clock: new VirtualClock({ mode: "manual", start: START, wall }) };
  };

  it("moves from timer to timer until what it waits for happens", async () => {
    const { clock } = manual();
    let done = false;
    clock.after(1000, () => {});
    clock.after(30_000, () => (done = true));
    clock.after(60_000, () => {});
    expect(await stepUntil(clock, () => done, START + HOUR, HOUR)).toBe("done");
    expect(clock.now()).toBe(START + 30_000);
  });

  it("waits for real work instead of moving time past its timeout", async () => {
    const { clock } = manual();
    let timedOut = false;
    let completed = false;
    clock.after(600_000, () => (timedOut = true)); // the job's execution timeout
    const working = clock.activity.working(); // the job, on a worker process
    const stepping = stepUntil(clock, () => completed, START + HOUR, HOUR);
    await turns();
    completed = true; // the worker posts its result
    working();
    expect(await stepping).toBe("done");
    expect(timedOut).toBe(false);
    expect(clock.now()).toBe(START);
  });

  it("gives up when real work outlasts its wall budget", async () => {
    const { wall, clock } = manual();
    clock.after(1000, () => {});
    const working = clock.activity.working();
    const stepping = stepUntil(clock, () => false, START + HOUR, 5000);
    await turns();
    wall.advance(5000);
    expect(await stepping).toBe("late");
    expect(clock.now()).toBe(START);
    working();
  });

  it("stops when no timer is due before the limit and nothing runs", async () => {
    const { clock } = manual();
    clock.after(2 * HOUR, () => {});
    expect(await stepUntil(clock, () => false, START + HOUR, HOUR)).toBe("stuck");
    expect(clock.now()).toBe(START);
  });
});
