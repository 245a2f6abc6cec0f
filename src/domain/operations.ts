/**
 * The operations of an endpoint's queue and of its worker routes, as paths name them
 * (`/v2/{endpoint_id}/{operation}`), fault rules match them and the journal records them; and the
 * permission scopes of API keys.
 */

/** Operations of an endpoint's queue, as fault rules and the journal name them. */
export const QUEUE_OPERATIONS = ["run", "runsync", "status", "status-sync", "stream", "cancel", "retry", "purge-queue", "health", "metrics", "requests", "openai", "batch"] as const;

/** Operations a worker process calls (real workers: job-take, job-stop, job-done, job-stream, ping). */
export const WORKER_OPERATIONS = ["job-take", "job-take-batch", "job-stop", "job-done", "job-stream", "ping"] as const;

/** The operation of every request to a load-balancing endpoint, `/lb/{endpoint_id}/...`, as the journal and fault rules name it. */
export const LOAD_BALANCER_OPERATION = "lb" as const;

/** The operation of the OpenAI-compatible routes, `/v2/{endpoint_id}/openai/...`. */
export const OPENAI_OPERATION = "openai";

/**
 * Permission scopes of an API key. The specification leaves them open ("Authentication", item
 * 5); these split each surface by reading and changing, and give workers their own.
 */
export const SCOPES = ["queue:read", "queue:write", "rest:read", "rest:write", "worker"] as const;
export type Scope = (typeof SCOPES)[number];
