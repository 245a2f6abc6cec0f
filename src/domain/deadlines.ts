import type { TimerHandle, VirtualClock } from "./clock.js";
import type { Job } from "./job.js";
import type { JobStore } from "./ports.js";

const BATCH = 500;

/**
 * One clock timer for every job deadline (ttl, execution timeout, result retention). Deadlines
 * live in the database with the job; the timer is armed for the earliest, so a restart on a file
 * database rebuilds it with one query and a million pending jobs cost one timer.
 */
export class Deadlines {
  private timer: TimerHandle | undefined;
  /** While firing, re-arming waits for the end: every deadline asked for is in the store by then. */
  private firing = false;

  constructor(
    private readonly clock: VirtualClock,
    private readonly jobs: JobStore,
    private readonly onDue: (job: Job, now: number) => void,
  ) {}

  /** Makes sure the timer fires no later than `at`. */
  schedule(at: number | undefined): void {
    if (at === undefined || !Number.isFinite(at)) return;
    if (this.firing) return;
    if (this.timer && this.timer.at <= at) return;
    this.clock.cancel(this.timer);
    this.timer = this.clock.at(at, () => this.fire(), "deadlines");
  }

  /** Re-arms from the database (start, reset, restore). */
  rebuild(): void {
    this.clock.cancel(this.timer);
    this.timer = undefined;
    this.schedule(this.jobs.nextDeadline());
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    this.firing = true;
    try {
      for (let round = 0; round < 10_000; round++) {
        const due = this.jobs.due(now, BATCH);
        for (const job of due) this.onDue(job, now);
        if (due.length < BATCH) break;
      }
    } finally {
      this.firing = false;
    }
    this.schedule(this.jobs.nextDeadline());
  }
}
