/** A queue-based endpoint as the scheduler sees it. */

/** A handler by name (`echo`, `scripted`, a registered name, a module path) or an HTTP worker. */
export type HandlerRef = string | { type: "http"; url: string };

export interface EndpointSpec {
  id: string;
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
  createdAt: number;
  /** Management fields (templateId, gpuTypeIds, ...) kept as given. */
  extra: Record<string, unknown>;
}

export const describeHandler = (h: HandlerRef): string => (typeof h === "string" ? h : `${h.type} ${h.url}`);
