import { EXTERNAL_WORKER_SEEN_MS } from "./domain/external-workers.js";
import type { ExternalWorkerReader } from "./domain/management/endpoint-workers.js";
import type { JobStore } from "./domain/ports.js";
import type { WorkerProtocol } from "./domain/worker-protocol.js";

/**
 * The worker processes the v2 workers listing shows, read from the worker protocol: those seen
 * within `EXTERNAL_WORKER_SEEN_MS` (as `/health` counts them) and those holding a job.
 */
export function externalWorkerReader(protocol: WorkerProtocol, jobs: Pick<JobStore, "busyWorkers">): ExternalWorkerReader {
  return {
    active(endpointId, now) {
      const busy = jobs.busyWorkers(endpointId);
      const out = protocol.workers
        .list(endpointId)
        .filter((w) => busy.has(w.id) || now - w.lastSeen <= EXTERNAL_WORKER_SEEN_MS)
        .map((w) => ({ id: w.id, busy: busy.has(w.id) }));
      for (const id of busy) if (!out.some((w) => w.id === id)) out.push({ id, busy: true });
      return out;
    },
  };
}
