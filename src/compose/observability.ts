import type { Config } from "../config/schema.js";
import type { VirtualClock } from "../domain/clock.js";
import { VIRTUAL_TIME_MAX_MS } from "../domain/bounds.js";
import { FaultRules, JOB_FAULTS } from "../domain/faults.js";
import type { Logger } from "../domain/logger.js";
import type { JobNotifier } from "../domain/notifier.js";
import type { JobStore } from "../domain/ports.js";
import type { Scheduler, SchedulerFaults } from "../domain/scheduler.js";
import { logJobEnds } from "../domain/job-log.js";
import { recordTimelines } from "../domain/timeline.js";
import { Webhooks } from "../domain/webhooks.js";
import { fetchWebhookSender } from "../http/webhook-sender.js";
import type { Db } from "../store/db.js";
import { SqliteObservabilityStore } from "../store/observability-store.js";
import type { WriteBehind } from "../store/write-behind.js";

const WEEK_MS = 7 * 24 * 3_600_000;

/**
 * Fault injection, job timelines, webhooks and the journal's store, wired to the domain.
 * `scheduler` is read lazily: the scheduler itself is built with `schedulerFaults`.
 */
export function buildObserve(d: { db: Db; writes: WriteBehind; clock: VirtualClock; config: Config; notifier: JobNotifier; jobs: JobStore; log: Logger; scheduler: () => Scheduler }) {
  const { clock, config, notifier, log } = d;
  const observe = new SqliteObservabilityStore(d.db, d.writes);
  const faults = new FaultRules(config.seed, () => d.scheduler().refreshCapacity());
  const schedulerFaults: SchedulerFaults = {
    atStart: (job) => {
      const rule = faults.fire(JOB_FAULTS, { endpoint: job.endpointId, operation: undefined });
      if (rule) log.warn(`fault ${rule.id} fired: ${rule.fault.type} on job ${job.id} (${job.endpointId})`);
      return rule;
    },
    blocksWorkers: (endpointId) => faults.blocksWorkers(endpointId),
  };
  recordTimelines(notifier, observe);
  logJobEnds(notifier, log);
  const webhooks = new Webhooks({ clock, notifier, store: observe, send: fetchWebhookSender(config.webhooks.timeoutMs), log });
  webhooks.start();

  /** Advances to each next timer until no job waits or runs and no webhook retry is due. */
  const runUntilIdle = async (maxMs = WEEK_MS): Promise<void> => {
    if (!(maxMs >= 0)) throw new RangeError(`runUntilIdle needs a non-negative number of ms, got ${maxMs}`);
    // Never past the end of virtual time: a timer due after it can never fire.
    const limit = Math.min(clock.now() + maxMs, VIRTUAL_TIME_MAX_MS);
    for (let i = 0; i < 1_000_000; i++) {
      await clock.settle();
      if (d.jobs.countActive() === 0 && webhooks.pending() === 0) return;
      const next = clock.nextDue();
      if (next === undefined) return; // nothing on the clock can change anything any more
      if (next > limit) {
        if (limit > clock.now()) await clock.advance(limit - clock.now());
        return;
      }
      await clock.advance(Math.max(0, next - clock.now()));
    }
  };

  return {
    observe,
    faults,
    schedulerFaults,
    webhooks,
    runUntilIdle,
    reset: () => {
      observe.clearAll();
      faults.reset(config.faults);
    },
  };
}
