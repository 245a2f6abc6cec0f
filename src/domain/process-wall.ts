import type { WallTime } from "./clock.js";

/** The longest delay setTimeout takes. */
export const MAX_WALL_DELAY = 2_147_483_647;

/**
 * The process's wall time: `Date.now()`, and timers that do not keep the process alive, all
 * cancelled by `stop()` (a stopped emulator leaves none behind). A timer that throws is reported,
 * never thrown.
 */
export class ProcessWall implements WallTime {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly onError: (error: unknown, label: string) => void) {}

  now(): number {
    return Date.now();
  }

  after(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      try {
        fn();
      } catch (error) {
        this.onError(error, "wall-timer");
      }
    }, Math.max(0, Math.min(MAX_WALL_DELAY, ms)));
    timer.unref?.();
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
