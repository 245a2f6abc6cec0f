/**
 * What waits on virtual time and what runs on real time: the one rule by which virtual time may
 * skip ahead.
 *
 * **Time may jump to the next due timer while someone waits on virtual time and nothing runs on
 * real time.** Someone waits: a client's request held open by minipod (`/runsync`, `/status-sync`,
 * a held `/stream` poll, an OpenAI request or its event stream, a load-balanced request waiting
 * for a worker or a cold start), `waitForJob`. Something runs on real time: a handler in minipod's
 * process computing (not while it sleeps on the virtual clock), a job on a worker process or a job
 * queued for one, a worker process starting, a load-balanced request at a worker process, the
 * body of a request still coming from its client while a route reads it, a piece of a streamed
 * answer still going out to a client that reads slowly (for a bounded wall time), a webhook in flight.
 *
 * The `auto` clock applies the rule by itself (see VirtualClock); `waitForJob` and `runUntilIdle`
 * step time by it on every clock (`stepUntil`). Jumping while real work runs would fire a timeout
 * that real time has not reached (a worker process's job timed out mid-run); not jumping while
 * only timers are left makes every waiter wait for nothing.
 */
import type { WallTime } from "./wall.js";

/** Ends what a call of `waiting()` or `working()` began; a second call does nothing. */
export type Release = () => void;

export class Activity {
  private waiters = 0;
  private work = 0;
  private readonly sources = new Set<() => boolean>();
  private readonly listeners = new Set<() => void>();

  /** Someone waits on virtual time until the returned function is called. */
  waiting(): Release {
    this.waiters++;
    this.notify();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.waiters--;
      this.notify();
    };
  }

  /** Real work runs until the returned function is called. */
  working(): Release {
    this.work++;
    this.notify();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.work--;
      this.notify();
    };
  }

  /**
   * Real work that a count cannot follow (jobs queued for a worker process: they leave the queue
   * in many ways), as a test asked each time; whoever changes what it reads calls `changed()`.
   * Returns its removal.
   */
  addSource(test: () => boolean): () => void {
    this.sources.add(test);
    return () => this.sources.delete(test);
  }

  /** How many wait on virtual time now. */
  get waiterCount(): number {
    return this.waiters;
  }

  /** Whether anything runs on real time. */
  busy(): boolean {
    if (this.work > 0) return true;
    for (const test of this.sources) if (test()) return true;
    return false;
  }

  /** The rule: someone waits on virtual time and nothing runs on real time. */
  maySkip(): boolean {
    return this.waiters > 0 && !this.busy();
  }

  /** Calls `fn` whenever a count changes or `changed()` is called; returns the unsubscribe. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** What a source reads may have changed (a job moved, a worker process came or went). */
  changed(): void {
    this.notify();
  }

  /** Resolves at the next change, or after `ms` of wall time. */
  nextChange(wall: WallTime, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        off();
        cancel();
        resolve();
      };
      const off = this.onChange(done);
      const cancel = wall.after(ms, done);
    });
  }

  private notify(): void {
    for (const fn of this.listeners) fn();
  }
}

/** What `stepUntil` moves: the virtual clock (`VirtualClock`), as far as it reads it. */
export interface SteppedClock {
  readonly wall: WallTime;
  readonly activity: Activity;
  settle(): Promise<void>;
  nextDue(): number | undefined;
  advanceTo(at: number): Promise<void>;
}

/** How `stepUntil` ended: what it waited for happened, nothing due could change it before the limit, or real work outlasted the wall budget. */
export type StepEnd = "done" | "stuck" | "late";

/**
 * Moves virtual time timer by timer until `done()` holds, by the rule: to the next timer only while
 * no real work runs, and otherwise waiting (in wall time) for that work to change something. Stops
 * as "stuck" when no timer is due by `limit` (virtual epoch ms) and no real work runs, and as
 * "late" once real work has kept it waiting past `wallMs` of wall time in all. `done` may throw
 * to end the wait with an error.
 */
export async function stepUntil(clock: SteppedClock, done: () => boolean, limit: number, wallMs: number): Promise<StepEnd> {
  const deadline = clock.wall.now() + wallMs;
  for (;;) {
    await clock.settle();
    if (done()) return "done";
    if (clock.activity.busy()) {
      const left = deadline - clock.wall.now();
      if (left <= 0) return "late";
      await clock.activity.nextChange(clock.wall, left);
      continue;
    }
    const next = clock.nextDue();
    if (next === undefined || next > limit) return "stuck";
    await clock.advanceTo(next);
  }
}
