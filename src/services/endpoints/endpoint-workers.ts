import type { EndpointSpec } from "../../domain/endpoint.js";
import { EXTERNAL_HANDLER } from "../../domain/external-workers.js";
import type { SimWorker } from "../../domain/simulated-workers.js";

/** A worker's state as the v2 listing names it. */
export type WorkerStatus = "RUNNING" | "IDLE" | "INITIALIZING" | "THROTTLED" | "UNHEALTHY";

/** A worker of an endpoint: simulated, or a worker process fetching jobs over HTTP. */
export interface EndpointWorker {
  id: string;
  status: WorkerStatus;
  /** When it started (simulated workers: its creation, cold start included; worker processes: their first call). */
  startedAt: number | undefined;
  /** A worker process rather than a simulated worker. */
  external: boolean;
}

/**
 * What the listing reads of worker processes (endpoints whose handler is "external"): those that
 * are present now (not stopped, not lost), with their status. A small read interface, so how the
 * worker protocol tracks its workers (heartbeats, lost workers) can change behind it.
 */
export interface ExternalWorkerReader {
  active(endpointId: string): Array<{ id: string; status: WorkerStatus; startedAt: number }>;
}

const STATUS: Record<SimWorker["state"], WorkerStatus> = { initializing: "INITIALIZING", idle: "IDLE", running: "RUNNING" };

/** The workers of an endpoint now: its simulated workers, or, when worker processes serve it, those. */
export function endpointWorkers(spec: EndpointSpec, simulated: readonly SimWorker[], reader: ExternalWorkerReader): EndpointWorker[] {
  const external = spec.handler === EXTERNAL_HANDLER ? reader.active(spec.id) : [];
  return [
    ...simulated.map((w) => ({ id: w.id, status: STATUS[w.state], startedAt: w.createdAt, external: false })),
    ...external.map((w) => ({ ...w, external: true })),
  ];
}
