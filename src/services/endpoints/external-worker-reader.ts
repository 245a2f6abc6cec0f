import type { ExternalWorkerState } from "../../domain/external-workers.js";
import type { ExternalWorkerReader, WorkerStatus } from "./endpoint-workers.js";
import type { WorkerProtocol } from "../../domain/worker-protocol.js";

/** How the v2 listing names the states of a worker process that is present; stopped and lost ones have left. */
const STATUS: Partial<Record<ExternalWorkerState, WorkerStatus>> = { idle: "IDLE", running: "RUNNING", unhealthy: "UNHEALTHY" };

/** The worker processes the v2 workers listing shows, read from the worker protocol's registry. */
export function externalWorkerReader(protocol: WorkerProtocol): ExternalWorkerReader {
  return {
    active: (endpointId) =>
      protocol.workers.list(endpointId).flatMap((w) => {
        const status = STATUS[w.state];
        return status ? [{ id: w.id, status, startedAt: w.startedAt }] : [];
      }),
  };
}
