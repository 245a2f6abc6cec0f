/**
 * The virtual clock: the one source of time for the whole emulator.
 *
 * Every delay in minipod (handler sleeps, execution timeouts, ttl expiry, result retention,
 * cold starts, idle scale-down, held requests, webhook retries, rate-limit windows) is a timer
 * here. In `manual` mode time moves only through `advance`; in `real` mode virtual time follows
 * the wall clock (optionally scaled by `speed`) and a single wall-clock timer is armed for the
 * earliest virtual timer. `auto` is `real` that also skips ahead: whenever someone waits on
 * virtual time and nothing runs on real time (the rule of `Activity`), time jumps to the next
 * due timer, fires it, lets its work settle, and looks again.
 */
import { Activity } from "./activity.js";
import { CLOCK_SPEED_MAX, VIRTUAL_TIME_MAX_MS, VIRTUAL_TIME_MIN_MS } from "./bounds.js";
import { TimerHeap, type Timer } from "./timer-heap.js";
import { MAX_WALL_DELAY, StoppableWall, type Wall } from "./wall.js";

export type ClockMode = "real" | "manual" | "auto";

/** The clock modes, as the config, the flags and the control API name them. */
export const CLOCK_MODES = ["real", "manual", "auto"] as const satisfies readonly ClockMode[];

export interface TimerHandle {
  readonly id: number;
  readonly at: number;
}

export interface ClockOptions {
  mode: ClockMode;
  /** Virtual epoch ms at start; defaults to the wall's time. */
  start?: number;
  /** Real and auto modes: virtual ms per wall ms while time follows the wall. */
  speed?: number;
  /** How long `advance` waits (wall ms) for work that does not settle before moving on. */
  settleTimeoutMs?: number;
  /** Called when a timer callback throws; the clock itself never throws from a timer. */
  onError?: (error: unknown, label: string) => void;
  /** Called when `advance` gave up waiting for held work. */
  onSettleTimeout?: (holds: number) => void;
  /**
   * Wall time, its timers and the event loop's turns (the process's, `compose/process-wall.ts`;
   * tests give a fake time, which real and auto time then follow, and the settle timeout too).
   */
  wall: Wall;
}

/** Cancelled timers the heap may keep before they are dropped at once (when they are half of it). */
const CANCELLED_KEPT = 256;

/**
 * The clock. `advance(ms)` moves time by exactly `ms`: it fires every timer due on the way in
 * time order and, after each, waits until the work that timer started has settled (no held work,
 * no timer due now, nothing new scheduled during one full turn of the event loop).
 */
export class VirtualClock {
  readonly mode: ClockMode;
  readonly speed: number;
  private readonly heap = new TimerHeap();
  private readonly byId = new Map<number, Timer>();
  /** Cancelled timers still in the heap: they leave it when they come first, or all at once (see `cancel`). */
  private cancelledInHeap = 0;
  private seq = 0;
  private anchorVirtual: number;
  private anchorWall: number;
  private holds = 0;
  private version = 0;
  private lastWall = NaN;
  private lastAnchorVirtual = NaN;
  private lastAnchorWall = NaN;
  private lastNow = NaN;
  private holdWaiters: Array<() => void> = [];
  private cancelWallTimer: (() => void) | undefined;
  private wallTimerAt = Infinity;
  private drainScheduled = false;
  private advancing: Promise<void> = Promise.resolve();
  private stopped = false;
  private skipScheduled = false;
  private skipping = false;
  private readonly settleTimeoutMs: number;
  private readonly onError: (error: unknown, label: string) => void;
  private readonly onSettleTimeout: (holds: number) => void;
  /** Wall time and wall timers, the clock's and its readers'; `stop()` cancels every one. */
  readonly wall: StoppableWall;
  /** Who waits on virtual time and what runs on real time: when time may skip ahead. */
  readonly activity = new Activity();

  constructor(options: ClockOptions) {
    this.mode = options.mode;
    this.speed = options.speed ?? 1;
    if (!(this.speed > 0 && this.speed <= CLOCK_SPEED_MAX)) throw new RangeError(`clock speed must be above 0 and at most ${CLOCK_SPEED_MAX}, got ${this.speed}`);
    this.onError = options.onError ?? (() => {});
    this.wall = new StoppableWall(options.wall);
    this.anchorWall = this.wall.now();
    this.anchorVirtual = options.start ?? this.anchorWall;
    if (!(this.anchorVirtual >= VIRTUAL_TIME_MIN_MS && this.anchorVirtual <= VIRTUAL_TIME_MAX_MS)) {
      throw new RangeError(`clock start must be from ${VIRTUAL_TIME_MIN_MS} to ${VIRTUAL_TIME_MAX_MS} (${new Date(VIRTUAL_TIME_MAX_MS).toISOString()}), got ${options.start}`);
    }
    this.settleTimeoutMs = options.settleTimeoutMs ?? 10_000;
    this.onSettleTimeout = options.onSettleTimeout ?? (() => {});
    if (this.mode === "auto") this.activity.onChange(() => this.maySkip());
  }

  /** Virtual now, integer epoch milliseconds; never past `VIRTUAL_TIME_MAX_MS`. */
  now(): number {
    // While auto skips, time stands between its jumps (as manual time does), so a 1500 ms sleep lasts 1500 ms exactly.
    if (this.mode === "manual" || this.skipping) return this.anchorVirtual;
    // One wall reading per run of code (~15 a /run), its time kept with it in number fields (NaN: none yet; V8 keeps them unboxed).
    const wall = this.wall.now();
    if (wall === this.lastWall && this.anchorVirtual === this.lastAnchorVirtual && this.anchorWall === this.lastAnchorWall) return this.lastNow;
    // A fast real clock left running long enough reaches the end of time, and stays there.
    const now = Math.min(VIRTUAL_TIME_MAX_MS, this.anchorVirtual + Math.floor((wall - this.anchorWall) * this.speed));
    this.lastWall = wall;
    this.lastAnchorVirtual = this.anchorVirtual;
    this.lastAnchorWall = this.anchorWall;
    this.lastNow = now;
    return now;
  }

  /** How far `advance` can still move time: the virtual ms left before `VIRTUAL_TIME_MAX_MS`. */
  remaining(): number {
    return VIRTUAL_TIME_MAX_MS - this.now();
  }

  /** Number of live timers. */
  pending(): number {
    return this.byId.size;
  }

  /** Due time of the earliest live timer. */
  nextDue(): number | undefined {
    return this.peekLive()?.at;
  }

  /** Runs `fn` when virtual time reaches `at` (soon, if `at` is not in the future). */
  at(at: number, fn: () => void, label = "timer"): TimerHandle {
    const t: Timer = { id: ++this.seq, at: Math.max(0, Math.floor(at)), seq: this.seq, fn, label, cancelled: false };
    this.heap.push(t);
    this.byId.set(t.id, t);
    this.version++;
    if (t.at <= this.now()) this.scheduleDrain();
    else if (this.mode !== "manual") this.arm();
    this.maySkip();
    return { id: t.id, at: t.at };
  }

  /** Runs `fn` after `ms` virtual milliseconds. */
  after(ms: number, fn: () => void, label?: string): TimerHandle {
    return this.at(this.now() + Math.max(0, ms), fn, label);
  }

  /** Cancels a timer; unknown or already fired handles are ignored. */
  cancel(handle: TimerHandle | undefined): void {
    if (!handle) return;
    const t = this.byId.get(handle.id);
    if (!t) return;
    t.cancelled = true;
    this.byId.delete(handle.id);
    // A timer due far ahead and cancelled (a worker's idle timeout, re-armed after every job)
    // would otherwise stay in the heap until its time: one per job, for an hour.
    if (++this.cancelledInHeap > CANCELLED_KEPT && 2 * this.cancelledInHeap > this.heap.size) {
      this.heap.dropCancelled();
      this.cancelledInHeap = 0;
    }
  }

  /** Timers in the heap, cancelled ones not dropped yet included. */
  get heapSize(): number {
    return this.heap.size;
  }

  /**
   * Marks asynchronous work in progress that `advance` must wait for (a handler computing, a
   * request being written); it is real work for `activity` too. Returns the release function;
   * releasing twice is harmless.
   */
  hold(): () => void {
    this.holds++;
    this.version++;
    const working = this.activity.working();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      working();
      this.holds--;
      this.version++;
      if (this.holds === 0) this.wakeHoldWaiters();
    };
  }

  /**
   * Moves virtual time forward by exactly `ms`, firing due timers in order and letting the work
   * each one starts settle before the next. Calls are serialised. Rejects with a RangeError,
   * having changed nothing, when `ms` is negative, not finite, or would pass `VIRTUAL_TIME_MAX_MS`.
   */
  advance(ms: number): Promise<void> {
    const run = this.advancing.then(() => this.doAdvance(ms));
    this.advancing = run.catch(() => {});
    return run;
  }

  /** `advance` to virtual time `at`, measured when its turn comes: none when `at` has passed (it settles). */
  advanceTo(at: number): Promise<void> {
    const run = this.advancing.then(() => this.doAdvance(Math.max(0, Math.min(at, VIRTUAL_TIME_MAX_MS) - this.now())));
    this.advancing = run.catch(() => {});
    return run;
  }

  /** Waits until no held work remains and no timer is due now (or the clock stops); held work for at most the settle timeout of wall time. */
  async settle(): Promise<void> {
    const deadline = this.wall.now() + this.settleTimeoutMs;
    for (;;) {
      const v = this.version;
      await this.wall.turn();
      if (this.stopped) return;
      this.runDue(this.now());
      if (this.holds > 0) {
        const remaining = deadline - this.wall.now();
        if (remaining <= 0) {
          this.onSettleTimeout(this.holds);
          return;
        }
        await this.waitForHolds(remaining);
        continue;
      }
      if (v === this.version && !this.hasDue(this.now())) return;
    }
  }

  /**
   * Puts virtual time at `at`, backwards too (restoring a snapshot). Only sensible with no timers
   * pending: call clearTimers() first.
   */
  set(at: number): void {
    this.setNow(Math.min(VIRTUAL_TIME_MAX_MS, Math.max(VIRTUAL_TIME_MIN_MS, Math.floor(at))));
    this.version++;
    if (this.mode !== "manual") this.arm();
  }

  /** Stops the wall-clock driver, cancels every wall timer (its readers' too) and forgets every timer; a settle under way ends. */
  stop(): void {
    this.stopped = true;
    this.cancelWallTimer?.();
    this.cancelWallTimer = undefined;
    this.wall.stop();
    this.wakeHoldWaiters();
    this.heap.clear();
    this.byId.clear();
    this.cancelledInHeap = 0;
  }

  /** Forgets every timer but keeps running (used by reset). */
  clearTimers(): void {
    this.heap.clear();
    this.byId.clear();
    this.cancelledInHeap = 0;
    this.version++;
  }

  private async doAdvance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance needs a non-negative number of ms, got ${ms}`);
    if (ms > this.remaining()) throw new RangeError(`advance by ${ms} ms would pass the latest virtual time, ${new Date(VIRTUAL_TIME_MAX_MS).toISOString()}; at most ${this.remaining()} ms are left`);
    const target = this.now() + Math.floor(ms);
    await this.settle();
    for (;;) {
      const t = this.peekLive();
      if (!t || t.at > target) break;
      if (t.at > this.now()) this.setNow(t.at);
      this.runDue(this.now());
      await this.settle();
    }
    if (target > this.now()) this.setNow(target);
    await this.settle();
    if (this.mode !== "manual") this.arm();
  }

  private setNow(v: number): void {
    this.anchorVirtual = v;
    if (this.mode !== "manual") this.anchorWall = this.wall.now();
  }

  /** Auto mode: starts skipping ahead (soon, once) when the rule allows it. */
  private maySkip(): void {
    if (this.mode !== "auto" || this.skipScheduled || this.skipping || this.stopped || !this.activity.maySkip()) return;
    this.skipScheduled = true;
    this.wall.nextTurn(() => {
      this.skipScheduled = false;
      void this.skip();
    });
  }

  /**
   * Jumps to the next due timer, fires it and lets its work settle, again and again while the
   * rule allows it. The rule is asked before each jump, so a waiter answered, or real work begun,
   * by one timer stops the next jump. Time does not follow the wall meanwhile.
   */
  private async skip(): Promise<void> {
    if (this.skipping) return;
    this.anchorVirtual = this.now();
    this.skipping = true;
    try {
      for (;;) {
        if (this.stopped || !this.activity.maySkip()) return;
        const next = this.peekLive();
        if (!next || next.at > VIRTUAL_TIME_MAX_MS) return;
        await this.advanceTo(next.at);
      }
    } catch (error) {
      this.onError(error, "auto-skip");
    } finally {
      // Time follows the wall again from where the last jump left it.
      this.anchorWall = this.wall.now();
      this.skipping = false;
      this.arm();
    }
  }

  private peekLive(): Timer | undefined {
    for (;;) {
      const t = this.heap.peek();
      if (!t || !t.cancelled) return t;
      this.heap.pop();
      this.cancelledInHeap--;
    }
  }

  private hasDue(now: number): boolean {
    const t = this.peekLive();
    return t !== undefined && t.at <= now;
  }

  /** Fires every live timer due at or before `now`, in (at, seq) order. */
  private runDue(now: number): void {
    for (;;) {
      const t = this.peekLive();
      if (!t || t.at > now) return;
      this.heap.pop();
      this.byId.delete(t.id);
      try {
        t.fn();
      } catch (error) {
        this.onError(error, t.label);
      }
    }
  }

  private scheduleDrain(): void {
    if (this.drainScheduled || this.stopped) return;
    this.drainScheduled = true;
    this.wall.nextTurn(() => {
      this.drainScheduled = false;
      if (this.stopped) return;
      this.runDue(this.now());
      if (this.mode !== "manual") this.arm();
    });
  }

  private waitForHolds(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel = this.wall.after(timeoutMs, resolve);
      this.holdWaiters.push(() => {
        cancel();
        resolve();
      });
    });
  }

  private wakeHoldWaiters(): void {
    const waiters = this.holdWaiters;
    this.holdWaiters = [];
    for (const w of waiters) w();
  }

  /** Real and auto modes: keep one wall-clock timer armed for the earliest virtual timer. */
  private arm(): void {
    if (this.stopped) return;
    const next = this.peekLive();
    if (!next) {
      this.cancelWallTimer?.();
      this.cancelWallTimer = undefined;
      this.wallTimerAt = Infinity;
      return;
    }
    if (this.cancelWallTimer && this.wallTimerAt <= next.at) return;
    this.cancelWallTimer?.();
    this.cancelWallTimer = undefined;
    this.wallTimerAt = Infinity;
    // Time stops at its end: a timer due after it never fires, and nothing is woken up for it.
    const now = this.now();
    if (next.at > VIRTUAL_TIME_MAX_MS && now >= VIRTUAL_TIME_MAX_MS) return;
    const delay = Math.min(MAX_WALL_DELAY, Math.max(0, Math.ceil((Math.min(next.at, VIRTUAL_TIME_MAX_MS) - now) / this.speed)));
    this.wallTimerAt = next.at;
    this.cancelWallTimer = this.wall.after(delay, () => {
      this.cancelWallTimer = undefined;
      this.wallTimerAt = Infinity;
      this.runDue(this.now());
      this.arm();
    });
  }
}
