import { LOAD_BALANCER_OPERATION, OPENAI_OPERATION, WORKER_OPERATIONS, type Scope } from "../domain/operations.js";
import { LB_PATH_PREFIX } from "../domain/load-balancer/types.js";

/**
 * The service's surfaces as the paths show them: `/v1/*` and the resource collections of `/v2`
 * are the REST surface; every other `/v2/{endpoint_id}/{operation}` is a queue operation, or a
 * worker route when a worker process fetches jobs; `/lb/{endpoint_id}/...` is a request to a
 * load-balancing endpoint, on the queue's scopes. Which permission scope each needs is decided
 * here, in one place, so authentication, rate limits and fault rules agree. The REST collections
 * come from the list of services (`src/services/index.ts`), given when the app is built.
 */

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

const LB_PREFIX = `${LB_PATH_PREFIX}/`;
const READ_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);
const WORKER: ReadonlySet<string> = new Set(WORKER_OPERATIONS);

/** Classifies service paths (`/v1/...`, `/v2/...`) given the REST collections of `/v2`. */
export class ServicePaths {
  private readonly restV2: ReadonlySet<string>;

  constructor(restV2: Iterable<string>) {
    this.restV2 = new Set(restV2);
  }

  /**
   * A path under `/v2` whose first segment is not a REST collection is a queue operation of that
   * endpoint, whether or not the operation exists (an unknown one still needs a key, then
   * answers 404).
   */
  classify(method: string, path: string): ServiceRoute {
    // Request methods arrive upper-case (fetch normalises them). Slicing by index, not split():
    // this runs on every /run.
    const read = READ_METHODS.has(method);
    if (path.startsWith(LB_PREFIX)) {
      // A load-balancing endpoint's request: the queue's scopes, the endpoint, one operation.
      const end = path.indexOf("/", LB_PREFIX.length);
      const endpointId = path.slice(LB_PREFIX.length, end === -1 ? undefined : end);
      return { surface: "queue", scope: read ? "queue:read" : "queue:write", endpointId, operation: LOAD_BALANCER_OPERATION };
    }
    const firstEnd = path.startsWith("/v2/") ? path.indexOf("/", 4) : -2;
    const first = firstEnd === -2 ? "" : path.slice(4, firstEnd === -1 ? undefined : firstEnd);
    if (first === "" || this.restV2.has(first)) {
      return { surface: "rest", scope: read ? "rest:read" : "rest:write", endpointId: undefined, operation: undefined };
    }
    let operation: string | undefined;
    if (firstEnd !== -1) {
      const opEnd = path.indexOf("/", firstEnd + 1);
      operation = path.slice(firstEnd + 1, opEnd === -1 ? undefined : opEnd);
    }
    if (operation !== undefined && WORKER.has(operation)) {
      return { surface: "worker", scope: "worker", endpointId: first, operation };
    }
    return { surface: "queue", scope: read ? "queue:read" : "queue:write", endpointId: first, operation };
  }

  /** Whether a path is an OpenAI-compatible route, whose errors take OpenAI's shape instead of problem+json. */
  isOpenAi(path: string): boolean {
    const route = this.classify("GET", path);
    return route.surface === "queue" && route.operation === OPENAI_OPERATION;
  }
}
