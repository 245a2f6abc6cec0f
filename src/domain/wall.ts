/**
 * The time domain/ is given: the one port through which the job engine reads wall time, sets
 * wall timers and waits for a turn of the event loop. Its one implementation, on the process's own
 * clock and timers, is the edge's (`compose/process-wall.ts`); a test gives a fake one.
 * Nothing else in domain/ reads the wall clock or sets a timer of its own (test/architecture.test.ts).
 */

/**
 * Wall time, for what lives outside the virtual world: worker processes poll and beat in wall
 * seconds whatever the virtual clock does, so their long polls and their heartbeat deadline are
 * measured here.
 */
export interface WallTime {
  /** Wall epoch ms. */
  now(): number;
  /** Runs `fn` after `ms` wall ms (the timer does not keep the process alive); returns its cancel. */
  after(ms: number, fn: () => void): () => void;
}

/** Wall time and the event loop: what the virtual clock and the engine run on. */
export interface Wall extends WallTime {
  /** Runs `fn` at the next turn of the event loop, once the input and output waiting and the timers due have run. */
  nextTurn(fn: () => void): void;
}

/** The longest delay a wall timer takes (a longer one is cut to it). */
export const MAX_WALL_DELAY = 2_147_483_647;

const none = (): void => {};

/**
 * A wall whose timers `stop()` cancels, every one: the clock's own and those of whoever reads the
 * clock's wall (held polls, heartbeats, a latency fault), so a stopped emulator leaves none behind.
 * After `stop()` no timer is set.
 */
export class StoppableWall implements Wall {
  private readonly live = new Set<() => void>();
  private stopped = false;

  constructor(private readonly wall: Wall) {}

  now(): number {
    return this.wall.now();
  }

  after(ms: number, fn: () => void): () => void {
    if (this.stopped) return none;
    const cancel = (): void => {
      if (this.live.delete(cancel)) stop();
    };
    const stop = this.wall.after(ms, () => {
      this.live.delete(cancel);
      fn();
    });
    this.live.add(cancel);
    return cancel;
  }

  nextTurn(fn: () => void): void {
    this.wall.nextTurn(fn);
  }

  /** Resolves at the next turn of the event loop. */
  turn(): Promise<void> {
    return new Promise((resolve) => this.wall.nextTurn(resolve));
  }

  /** Live timers. */
  get pending(): number {
    return this.live.size;
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of [...this.live]) cancel();
  }
}
