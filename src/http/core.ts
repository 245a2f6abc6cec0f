import type { VirtualClock } from "../domain/clock.js";
import type { JobService } from "../domain/jobs.js";
import type { Logger } from "../domain/logger.js";
import type { Scheduler } from "../domain/scheduler.js";

/** What the HTTP layer needs from the running emulator. */
export interface Core {
  clock: VirtualClock;
  jobs: JobService;
  scheduler: Scheduler;
  log: Logger;
  /** Empties jobs and returns to the configured state. */
  reset(): Promise<void>;
}
