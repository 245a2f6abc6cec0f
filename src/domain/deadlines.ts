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
  /** While firing, re-arming waits for the end; the earliest deadline asked for meanwhile. */
  private firing = false;
  private askedWhileFiring = Infinity;

  constructor(
    private readonly clock: VirtualClock,
    private readonly jobs: JobStore,
    private readonly onDue: (job: Job, now: number) => void,
  ) {}

  /** Makes sure the timer fires no later than `at`. */
  schedule(at: number | undefined): void {
    if (at === undefined || !Number.isFinite(at)) return;
    if (this.firing) {
      this.askedWhileFiring = Math.min(this.askedWhileFiring, at);
      return;
    }
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

  /**
   * Hands every due job to `onDue`, in batches, then re-arms for the earliest of: the first job the
   * last batch saw beyond now, and every deadline asked for while firing (jobs changed by `onDue`
   * or by what it started). A job deleted or postponed meanwhile can only make the timer fire
   * early, when it finds nothing due and re-arms.
   */
  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    this.firing = true;
    this.askedWhileFiring = Infinity;
    let next: number | undefined;
    let failure: { error: unknown } | undefined;
    try {
      for (let round = 0; round < 10_000 && !failure; round++) {
        // Mostly one job is due at a time: the first round reads two rows (that job and the next
        // deadline); later rounds, when many fall due at once, read them in batches.
        const limit = round === 0 ? 1 : BATCH;
        // One transaction per batch for everything its jobs cause (saves, deletes, jobs started):
        // one commit instead of one per statement, and a bounded transaction when a whole day of
        // retention ends at once. A job whose handling throws ends the firing, with what was done
        // committed, so memory and database agree.
        next = this.jobs.tx(() => {
          const batch = this.jobs.due(now, limit);
          for (const job of batch.jobs) {
            try {
              this.onDue(job, now);
            } catch (error) {
              failure = { error };
              break;
            }
          }
          return batch.next;
        });
        if (next === undefined || next > now) break;
      }
    } finally {
      this.firing = false;
    }
    if (failure) throw failure.error;
    this.schedule(Math.min(next ?? Infinity, this.askedWhileFiring));
  }
}
