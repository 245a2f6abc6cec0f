/**
 * The service's surfaces as the paths show them: `/v1/*` and the resource collections of `/v2`
 * are the REST surface; every other `/v2/{endpoint_id}/{operation}` is a queue operation, or a
 * worker route when a worker process fetches jobs. Which permission scope each needs is decided
 * here, in one place, so authentication, rate limits and the config's reserved names agree.
 */

/** First segments of `/v2/...` that are REST resources (the real `/v2` REST surface), not endpoint ids. */
export const REST_V2_RESOURCES: ReadonlySet<string> = new Set([
  "network-volumes",
  "pods",
  "serverless",
  "templates",
  "registries",
  "billing",
  "catalog",
  "account",
  "clusters",
]);

/** Operations a worker process calls (real workers: job-take, job-stop, job-done, job-stream, ping). */
export const WORKER_OPERATIONS: ReadonlySet<string> = new Set(["job-take", "job-take-batch", "job-stop", "job-done", "job-stream", "ping"]);

/**
 * Permission scopes of an API key. The specification leaves them open ("Authentication", item
 * 5); these split each surface by reading and changing, and give workers their own.
 */
export const SCOPES = ["queue:read", "queue:write", "rest:read", "rest:write", "worker"] as const;
export type Scope = (typeof SCOPES)[number];

export type Surface = "rest" | "queue" | "worker";

/** What a request to a service route is: its surface, the scope it needs, and for the queue its endpoint and operation. */
export interface ServiceRoute {
  surface: Surface;
  scope: Scope;
  /** Queue and worker routes: the `{endpoint_id}` of the path. */
  endpointId: string | undefined;
  /** Queue and worker routes: the operation segment (`run`, `status`, `job-take`, ...). */
  operation: string | undefined;
}

const READ_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Classifies a service path (`/v1/...` or `/v2/...`). A path under `/v2` whose first segment is
 * not a REST resource is a queue operation of that endpoint, whether or not the operation exists
 * (an unknown one still needs a key, then answers 404).
 */
export function classifyServiceRoute(method: string, path: string): ServiceRoute {
  // Request methods arrive upper-case (fetch normalises them). Slicing by index, not split():
  // this runs on every /run.
  const read = READ_METHODS.has(method);
  const firstEnd = path.startsWith("/v2/") ? path.indexOf("/", 4) : -2;
  const first = firstEnd === -2 ? "" : path.slice(4, firstEnd === -1 ? undefined : firstEnd);
  if (first === "" || REST_V2_RESOURCES.has(first)) {
    return { surface: "rest", scope: read ? "rest:read" : "rest:write", endpointId: undefined, operation: undefined };
  }
  let operation: string | undefined;
  if (firstEnd !== -1) {
    const opEnd = path.indexOf("/", firstEnd + 1);
    operation = path.slice(firstEnd + 1, opEnd === -1 ? undefined : opEnd);
  }
  if (operation !== undefined && WORKER_OPERATIONS.has(operation)) {
    return { surface: "worker", scope: "worker", endpointId: first, operation };
  }
  return { surface: "queue", scope: read ? "queue:read" : "queue:write", endpointId: first, operation };
}

/** Operations of an endpoint's queue (`/v2/{endpoint_id}/{operation}`), as fault rules and the journal name them. */
export const QUEUE_OPERATIONS = ["run", "runsync", "status", "status-sync", "stream", "cancel", "retry", "purge-queue", "health", "requests", "openai"] as const;

/** First segments of the `/v1` REST surface (its resource collections). */
export const REST_V1_RESOURCES: ReadonlySet<string> = new Set(["endpoints", "templates", "pods", "networkvolumes", "containerregistryauth", "billing"]);

/**
 * Every name a fault rule's `operation` can match: the queue's operations, the worker routes',
 * and the REST surface's collections (`/v1/{collection}`, `/v2/{resource}`); a test checks it
 * against the lists above.
 */
export const FAULT_OPERATIONS = [
  ...QUEUE_OPERATIONS,
  ...(["job-take", "job-take-batch", "job-stop", "job-done", "job-stream", "ping"] as const),
  ...(["account", "billing", "catalog", "clusters", "containerregistryauth", "endpoints", "network-volumes", "networkvolumes", "pods", "registries", "serverless", "templates"] as const),
] as const;
export type FaultOperation = (typeof FAULT_OPERATIONS)[number];

/** The operation of the OpenAI-compatible routes, `/v2/{endpoint_id}/openai/...`. */
export const OPENAI_OPERATION = "openai";

/** Whether a path is an OpenAI-compatible route, whose errors take OpenAI's shape instead of problem+json. */
export function isOpenAiPath(path: string): boolean {
  const route = classifyServiceRoute("GET", path);
  return route.surface === "queue" && route.operation === OPENAI_OPERATION;
}
