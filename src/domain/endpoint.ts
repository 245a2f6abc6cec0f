import { EmulatorError } from "./errors.js";

/** A queue-based endpoint as the scheduler sees it. */

/** A handler by name (`echo`, `scripted`, a registered name, a module path) or an HTTP worker. */
export type HandlerRef = string | { type: "http"; url: string };

/** Queue-based (the job queue) or load-balancing (requests go to the HTTP server a worker runs). */
export type EndpointType = "QUEUE" | "LOAD_BALANCER";

export interface EndpointSpec {
  id: string;
  /** Absent on queue endpoints (and on every endpoint stored before the type existed). */
  type?: EndpointType | undefined;
  name: string;
  handler: HandlerRef;
  workersMin: number;
  workersMax: number;
  /** Seconds a worker stays idle before it is scaled down (never below workersMin). */
  idleTimeout: number;
  /** Virtual ms a new worker takes to become ready. */
  coldStartMs: number;
  /** Endpoint default for policy.executionTimeout; the specification's default when unset. */
  executionTimeoutMs: number | undefined;
  /** Most batch workers (which run batch requests only, apart from `/run` traffic); workersMax when unset. */
  batchWorkersMax?: number | undefined;
  createdAt: number;
  /** Management fields (templateId, gpuTypeIds, ...) kept as given. */
  extra: Record<string, unknown>;
}

/**
 * The settings of an endpoint's batch workers: its handler and cold start, none kept warm, up to
 * `batchWorkersMax` of them.
 */
/** The handler of a configured endpoint that names none, when no template gives it one. */
export const DEFAULT_HANDLER = "echo";

export const batchSpecOf = (spec: EndpointSpec): EndpointSpec => ({ ...spec, workersMin: 0, workersMax: spec.batchWorkersMax ?? spec.workersMax });

/** Whether requests to the endpoint go to its workers' HTTP servers rather than through the queue. */
export const isLoadBalancer = (spec: Pick<EndpointSpec, "type">): boolean => spec.type === "LOAD_BALANCER";

export const describeHandler = (h: HandlerRef): string => (typeof h === "string" ? h : `${h.type} ${h.url}`);

/** How many endpoint ids a not-found message lists. */
const IDS_LISTED = 10;

/**
 * The answer to a queue request for an endpoint that does not exist: it lists those that do
 * (a typo is the usual cause) and how to add one.
 */
export function endpointNotFound(endpointId: string, known: readonly string[]): EmulatorError {
  const ids = known.slice(0, IDS_LISTED).map((id) => `"${id}"`).join(", ") + (known.length > IDS_LISTED ? ` and ${known.length - IDS_LISTED} more` : "");
  const listed = known.length === 0 ? "no endpoint is configured" : `the endpoints are ${ids}`;
  return new EmulatorError("ENDPOINT_NOT_FOUND", `endpoint "${endpointId}" not found; ${listed} (add one under "endpoints" in the config, or create it with POST /v1/endpoints)`);
}
