// A client's sleep on the virtual clock (POST /_emulator/clock/sleep, emulator.clock.sleep), with
// wall time that moves only when told: no real sleeps, nothing timed.
import { describe, expect, it } from "vitest";
import { clientSleep } from "../../src/domain/client-sleep.js";
import { VirtualClock, type ClockMode } from "../../src/domain/clock.js";
import { FakeWall } from "../support/fake-wall.js";

const START = 1_700_000_000_000;

function clockOf(mode: ClockMode) {
  const wall = new FakeWall();
  return { wall, clock: new VirtualClock({ mode, start: START, wall }) };
}

async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe("clientSleep", () => {
  it("ends at once on the auto clock while nothing runs on real time, the timers on the way fired in order", async () => {
    const { wall, clock } = clockOf("auto");
    const fired: number[] = [];
    clock.after(400, () => fired.push(clock.now() - START));
    clock.after(1500, () => fired.push(clock.now() - START));
    expect(await clientSleep(clock, 1000)).toBe(START + 1000);
    expect(fired).toEqual([400]);
    expect(await clientSleep(clock, 1000)).toBe(START + 2000);
    expect(fired).toEqual([400, 1500]);
    expect(wall.now()).toBe(1_000_000); // no wall time passed
    expect(clock.activity.waiterCount).toBe(0);
    clock.stop();
  });

  it("keeps in step with real work on the auto clock: the sleep ends when the wall has covered it", async () => {
    const { wall, clock } = clockOf("auto");
    const working = clock.activity.working(); // a job on a worker process
    let woke: number | undefined;
    void clientSleep(clock, 1000).then((at) => (woke = at));
    await turns();
    expect(woke).toBeUndefined();
    wall.advance(999);
    await turns();
    expect(woke).toBeUndefined();
    wall.advance(1);
    await turns();
    expect(woke).toBe(START + 1000);
    working();
    clock.stop();
  });

  it("moves the manual clock itself, by exactly the sleep, running what falls due", async () => {
    const { clock } = clockOf("manual");
    const fired: number[] = [];
    clock.after(250, () => fired.push(clock.now() - START));
    expect(await clientSleep(clock, 1000)).toBe(START + 1000);
    expect(fired).toEqual([250]);
    expect(clock.now()).toBe(START + 1000);
    clock.stop();
  });

  it("ends by the wall, should its timer be cleared before it fires (a reset)", async () => {
    const { wall, clock } = clockOf("real");
    let woke = false;
    void clientSleep(clock, 1000).then(() => (woke = true));
    clock.clearTimers();
    wall.advance(1000);
    await turns();
    expect(woke).toBe(false);
    wall.advance(5000);
    await turns();
    expect(woke).toBe(true);
    clock.stop();
  });
});
