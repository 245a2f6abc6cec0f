import { MAX_WALL_DELAY, type Wall, type WallTime } from "../domain/wall.js";

/**
 * The process's wall time and event loop, the one implementation of domain/'s `Wall`:
 * `Date.now()`, read once per run of synchronous code, timers that do not keep the process alive,
 * and `setImmediate`. A timer that throws is reported, never thrown. (The clock cancels the timers
 * it and its readers set when it stops: `StoppableWall`.)
 */
export class ProcessWall implements Wall {
  /**
   * The reading of the code running now (what one synchronous run does happens at one instant);
   * -1 when none. A number from the start, so V8 keeps it as a double in place instead of a new
   * heap number at each reading.
   */
  private turn = -1;
  private readonly endTurn = () => {
    this.turn = -1;
  };

  constructor(private readonly onError: (error: unknown, label: string) => void) {}

  /**
   * `Date.now()` as the code running now first read it (until its microtasks run): a job's
   * submission, its worker's cold start, its start, its handler's first sleep and the timers they
   * set, done in one go, see one time, so a millisecond ticking while that code runs (compiled the
   * first time, or collected) cannot make a virtual duration 1 ms longer.
   */
  now(): number {
    if (this.turn === -1) {
      this.turn = Date.now();
      queueMicrotask(this.endTurn);
    }
    return this.turn;
  }

  after(ms: number, fn: () => void): () => void {
    const timer = setTimeout(() => {
      try {
        fn();
      } catch (error) {
        this.onError(error, "wall-timer");
      }
    }, Math.max(0, Math.min(MAX_WALL_DELAY, ms)));
    timer.unref?.();
    return () => clearTimeout(timer);
  }

  nextTurn(fn: () => void): void {
    setImmediate(fn);
  }
}

/** The process's wall, or wall time given instead (a test's fake time) on the process's event loop. */
export function wallOf(time: WallTime | undefined, onError: (error: unknown, label: string) => void): Wall {
  const process = new ProcessWall(onError);
  if (time === undefined) return process;
  return { now: () => time.now(), after: (ms, fn) => time.after(ms, fn), nextTurn: (fn) => process.nextTurn(fn) };
}
