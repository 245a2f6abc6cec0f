import type { VirtualClock } from "../domain/clock.js";
import type { JobService } from "../domain/jobs.js";
import type { Logger } from "../domain/logger.js";
import type { RateLimits } from "../domain/rate-limit.js";
import type { Scheduler } from "../domain/scheduler.js";
import type { ApiKeys } from "./auth.js";

/** What the HTTP layer needs from the running emulator. */
export interface Core {
  clock: VirtualClock;
  jobs: JobService;
  scheduler: Scheduler;
  log: Logger;
  /** The accepted API keys and their scopes (`auth` of the config). */
  auth: ApiKeys;
  /** REST quotas and queue limits (`rateLimits` of the config), on the virtual clock. */
  rateLimits: RateLimits;
  /** Empties jobs and returns to the configured state. */
  reset(): Promise<void>;
}
