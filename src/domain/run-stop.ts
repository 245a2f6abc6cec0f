import type { VirtualClock } from "./clock.js";

/**
 * How a run's handler is stopped (cancel, timeout, expiry, crash): its virtual sleeps reject and
 * its `AbortSignal` aborts. The AbortController is made only if the handler reads `ctx.signal`:
 * creating one per job and dispatching its abort event was a tenth of the time of a clock advance
 * that times out thousands of jobs.
 */
export class RunStop {
  private controller: AbortController | undefined;
  private reason: Error | undefined;
  /** Made at the first sleep: most handlers never sleep. */
  private sleeping: Set<(reason: Error) => void> | undefined;

  constructor(private readonly clock: VirtualClock) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  stop(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
    if (this.sleeping) for (const cancel of [...this.sleeping]) cancel(reason);
  }

  /** Waits `ms` of virtual time; rejects with the reason once stopped. */
  sleep(ms: number): Promise<void> {
    if (this.reason) return Promise.reject(this.reason);
    const sleeping = (this.sleeping ??= new Set());
    return new Promise<void>((resolve, reject) => {
      const cancel = (reason: Error) => {
        sleeping.delete(cancel);
        this.clock.cancel(handle);
        reject(reason);
      };
      const handle = this.clock.after(
        ms,
        () => {
          sleeping.delete(cancel);
          resolve();
        },
        "sleep",
      );
      sleeping.add(cancel);
    });
  }
}
