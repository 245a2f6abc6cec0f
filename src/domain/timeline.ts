import type { JobNotifier } from "./notifier.js";
import type { ObservabilityStore } from "./observability.js";

/** How many rows each log keeps (timelines, whose row holds a job's events of one turn; webhook attempts; journal); older ones are dropped. */
export const LOG_ROWS_KEPT = 100_000;
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
    if (++appended % TRIM_EVERY === 0) store.trimLogs(LOG_ROWS_KEPT);
  });
}
