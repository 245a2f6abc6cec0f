/**
 * The parts of a load-balancing endpoint as the balancer sees them: its workers, the affinity a
 * request asks for, and the answers the balancer gives instead of a worker.
 */

/** The path under which minipod serves load-balancing endpoints: `/lb/{endpoint_id}/{any path}`. */
export const LB_PATH_PREFIX = "/lb";

/**
 * The endpoint id the SDKs call a deployed Flash app's endpoints by (`/v2/flash/...`,
 * `https://flash.{host}/...`), the `X-Flash-*` headers naming which; the flash-environments service
 * passes such calls on to the environment's endpoint.
 */
export const DEPLOYED_APPS_ID = "flash";

/** A worker's health as its `/ping` says it: 204 initializing, 200 ready, anything else unhealthy. */
export type LbWorkerState = "initializing" | "ready" | "unhealthy";

/**
 * `simulated`: a worker minipod makes in its own process (the endpoint's handler is a function
 * or a built-in), cold start on the virtual clock, scaled by the balancer. `process`: an HTTP
 * server of its own (a worker process, or a server at a fixed URL), health-polled over HTTP.
 */
export type LbWorkerKind = "simulated" | "process";

/**
 * Starts and stops worker processes of an endpoint as its pool scales: `start` launches one (it
 * joins the pool when it registers), `stop` ends one the pool let go.
 */
export interface LbLauncher {
  start(): void;
  stop(workerId: string): void;
}

/** Where a process worker listens. */
export interface LbTarget {
  /** Its HTTP server, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** Its health check, e.g. http://127.0.0.1:41234/ping. */
  healthUrl: string;
}

export interface LbWorker {
  readonly id: string;
  readonly endpointId: string;
  readonly kind: LbWorkerKind;
  state: LbWorkerState;
  /** Requests it is answering now. */
  inFlight: number;
  createdAt: number;
  /** When `state` last changed. */
  since: number;
  /** When it first said it was initializing, and first said it was ready: its cold start is the difference. */
  initializingAt: number | undefined;
  readyAt: number | undefined;
  /** Process workers only. */
  target: LbTarget | undefined;
  /** Requests it has answered. */
  served: number;
}

/** What `X-Runpod-Worker-Id` asks of the routing (the service's worker affinity). */
export type Affinity = { mode: "none" } | { mode: "soft" | "strict" | "strict-resume"; workerId: string };

/**
 * Reads an `X-Runpod-Worker-Id` request header: empty or absent is normal routing, `<id>` soft
 * affinity, `strict <id>` and `strict-resume <id>` strict affinity.
 */
export function parseAffinity(header: string | null | undefined): Affinity {
  const value = header?.trim() ?? "";
  if (value === "") return { mode: "none" };
  const space = value.indexOf(" ");
  if (space > 0) {
    const mode = value.slice(0, space).toLowerCase();
    const workerId = value.slice(space + 1).trim();
    if ((mode === "strict" || mode === "strict-resume") && workerId !== "") return { mode, workerId };
  }
  return { mode: "soft", workerId: value };
}

/** An answer the balancer gives instead of a worker's: the status and the `error` of its JSON body. */
export class LbRefusal extends Error {
  constructor(
    readonly status: 400 | 404 | 413 | 502 | 524,
    readonly error: string,
  ) {
    super(error);
    this.name = "LbRefusal";
  }
}

/** The service's words for each refusal. */
export const NO_WORKERS = "no workers available";
export const AFFINITY_TIMEOUT = "timed out waiting for worker";
export const AFFINITY_GONE = "affinity_worker_gone";

/** A request's hold on a worker: released once its answer has ended. */
export interface Lease {
  readonly worker: LbWorker;
  /** Virtual ms the request waited for its worker. */
  readonly waitedMs: number;
  /** Calls `fn` if the request is still being answered when the processing limit (5.5 min) is up. */
  onTimeout(fn: () => void): void;
  /** Frees the worker's slot; later calls do nothing. */
  release(): void;
}

/** An endpoint's workers and requests now, for `/health`, the dashboard and the listing. */
export interface LbStatus {
  workers: { initializing: number; ready: number; unhealthy: number; idle: number; running: number };
  requests: { inFlight: number; waiting: number; served: number };
}
