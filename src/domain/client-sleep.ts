import { stepUntil } from "./activity.js";
import { VIRTUAL_TIME_MAX_MS } from "./bounds.js";
import type { VirtualClock } from "./clock.js";

/** Wall ms a sleep may outlast its own length on the real and auto clocks, should its timer be cleared (a reset) before it fires. */
const WALL_SLACK_MS = 5_000;

/**
 * A client's sleep on the virtual clock: resolves once `ms` of virtual time has passed, with the
 * virtual time then. On the auto and real clocks it waits on virtual time, so the auto clock skips
 * ahead while nothing runs on real time (the sleep ends at once, fired in time order with the
 * job's own timers) and keeps in step with the work while something does. On the manual clock it
 * moves time itself, as `waitForJob` does: timer by timer, waiting for real work (at most `ms` of
 * wall time), then to the end of the sleep.
 */
export async function clientSleep(clock: VirtualClock, ms: number): Promise<number> {
  const target = Math.min(clock.now() + Math.max(0, Math.floor(ms)), VIRTUAL_TIME_MAX_MS);
  if (clock.mode === "manual") {
    await stepUntil(clock, () => clock.now() >= target, target, ms);
    await clock.advanceTo(target);
    return clock.now();
  }
  await new Promise<void>((resolve) => {
    const waiting = clock.activity.waiting();
    const end = () => {
      waiting();
      cancelWall();
      clock.cancel(timer);
      resolve();
    };
    const timer = clock.at(target, end, "client-sleep");
    const cancelWall = clock.wall.after(Math.ceil(ms / clock.speed) + WALL_SLACK_MS, end);
  });
  return clock.now();
}
