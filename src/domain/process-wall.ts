import type { WallTime } from "./clock.js";

/** The longest delay setTimeout takes. */
export const MAX_WALL_DELAY = 2_147_483_647;

/**
 * The process's wall time: `Date.now()`, read once per run of synchronous code, and timers that do
 * not keep the process alive, all cancelled by `stop()` (a stopped emulator leaves none behind). A
 * timer that throws is reported, never thrown.
 */
export class ProcessWall implements WallTime {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** The reading of the code running now: what one synchronous run does happens at one instant. */
  private turn: number | undefined;
  private readonly endTurn = () => {
    this.turn = undefined;
  };

  constructor(private readonly onError: (error: unknown, label: string) => void) {}

  /**
   * `Date.now()` as the code running now first read it (until its microtasks run): a job's
   * submission, its worker's cold start, its start, its handler's first sleep and the timers they
   * set, done in one go, see one time, so a millisecond ticking while that code runs (compiled the
   * first time, or collected) cannot make a virtual duration 1 ms longer.
   */
  now(): number {
    if (this.turn === undefined) {
      this.turn = Date.now();
      queueMicrotask(this.endTurn);
    }
    return this.turn;
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
