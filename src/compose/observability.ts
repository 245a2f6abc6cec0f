import type { Config } from "../services/index.js";
import type { VirtualClock } from "../domain/clock.js";
import { stepUntil } from "../domain/activity.js";
import { VIRTUAL_TIME_MAX_MS } from "../domain/bounds.js";
import { FaultRules, JOB_FAULTS } from "../domain/faults.js";
import type { Logger } from "../domain/logger.js";
import type { JobNotifier } from "../domain/notifier.js";
import type { JobStore } from "../domain/ports.js";
import type { Scheduler, SchedulerFaults } from "../domain/scheduler.js";
import { logJobEnds } from "../domain/job-log.js";
import { recordTimelines } from "../domain/timeline.js";
import { Webhooks } from "../domain/webhooks.js";
import { OwnAddress } from "../http/own-address.js";
import { webhookSender } from "../http/webhook-sender.js";
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
  // Set once the server listens: no webhook is sent to minipod's own port.
  const ownAddress = new OwnAddress();
  const webhooks = new Webhooks({ clock, notifier, store: observe, send: webhookSender(config.webhooks.timeoutMs, ownAddress), log });
  webhooks.start();

  /**
   * Advances to each next timer until no job waits or runs, no webhook retry is due and no request
   * waits on virtual time (a load-balanced request waiting for a cold start, a paced stream), at
   * most `maxMs` virtual ms, by the rule of `Activity`: real work (a job on a worker process) is
   * waited for, not skipped past, at most `maxMs` of wall time in all.
   */
  const runUntilIdle = async (maxMs = WEEK_MS): Promise<void> => {
    if (!(maxMs >= 0)) throw new RangeError(`runUntilIdle needs a non-negative number of ms, got ${maxMs}`);
    // Never past the end of virtual time: a timer due after it can never fire.
    const limit = Math.min(clock.now() + maxMs, VIRTUAL_TIME_MAX_MS);
    const idle = () => d.jobs.countActive() === 0 && webhooks.pending() === 0 && clock.activity.waiterCount === 0;
    const end = await stepUntil(clock, idle, limit, maxMs);
    // Nothing due before the limit: time still moves to it (as advance would), unless nothing is due at all.
    if (end === "stuck" && clock.nextDue() !== undefined && limit > clock.now()) await clock.advanceTo(limit);
  };

  return {
    observe,
    faults,
    schedulerFaults,
    webhooks,
    ownAddress,
    runUntilIdle,
    reset: () => {
      observe.clearAll();
      faults.reset(config.faults);
    },
  };
}
