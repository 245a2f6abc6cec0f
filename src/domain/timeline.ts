import type { JobNotifier } from "./notifier.js";
import type { ObservabilityStore } from "./observability.js";

/**
 * What the logs keep; older entries are dropped. A timeline row holds one job's events of one
 * turn of the event loop (a job submitted, started and finished at once: three), so 50,000 rows
 * hold at least as many events as the 100,000 webhook attempts kept. A database in memory holds
 * its timeline events unwritten until a snapshot or an export needs them: the newest 150,000,
 * the whole timelines of 50,000 jobs run once.
 */
export const LOGS_KEPT = { timelineRows: 50_000, timelineEvents: 150_000, deliveries: 100_000 };
const TRIM_EVERY = 5_000;

/**
 * Records every change of every job (submitted, started on worker X, fault fired, retried,
 * cancelled, expired, ...) as its timeline. Stream chunks and progress updates are not
 * transitions and are left out.
 */
export function recordTimelines(notifier: JobNotifier, store: ObservabilityStore): () => void {
  let appended = 0;
  return notifier.onAny((c) => {
    if (c.cause === "progress" || c.cause.startsWith("streamed ")) return;
    store.appendEvent({ jobId: c.id, endpointId: c.endpointId || c.job?.endpointId || "", at: c.at, from: c.from, to: c.job?.status, cause: c.cause });
    if (++appended % TRIM_EVERY === 0) store.trimLogs(LOGS_KEPT);
  });
}
