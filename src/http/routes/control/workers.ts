import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { EXTERNAL_HANDLER, EXTERNAL_WORKER_STATES, type ExternalWorkerView } from "../../../domain/external-workers.js";
import type { EndpointType } from "../../../domain/endpoint.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { jsonBody } from "../../body.js";
import { EmulatorError } from "../../../domain/errors.js";
import { ERROR_RESPONSES, NO_PARAMETERS_BODY, NO_PARAMETERS_LIMIT, ok } from "../../schemas.js";

const TAG = "Emulator control";

export const ExternalWorkerSchema = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    state: z
      .enum(EXTERNAL_WORKER_STATES)
      .openapi({ description: "`lost`: silent past `externalWorkers.lostAfterMs` (its jobs went back to the queue); `stopped`: it asked (stopPod) or minipod stopped it" }),
    jobIds: z.array(z.string()).openapi({ description: "Jobs IN_PROGRESS on it" }),
    stoppingJobIds: z
      .array(z.string())
      .optional()
      .openapi({ description: "Jobs minipod ended (cancel, timeout, expiry) while it ran them, until it shows it let go of them: their stop is sent again meanwhile" }),
    reportedJobIds: z.array(z.string()).optional().openapi({ description: "The job ids its last heartbeat listed" }),
    openPolls: z.int().openapi({ description: "Its requests held open now (job-take and job-stop polls)" }),
    startedAt: z.int().openapi({ description: "Virtual epoch ms of its first request" }),
    lastSeenAt: z.int().openapi({ description: "Virtual epoch ms of its last request" }),
    lastHeartbeatAt: z.int().optional().openapi({ description: "Virtual epoch ms of its last heartbeat" }),
    runtimeVersion: z.string().optional().openapi({ description: "The worker library's version (from its heartbeat)" }),
    reason: z.string().optional().openapi({ description: "Why it is unhealthy, stopped or lost" }),
  })
  .openapi("ExternalWorker");

const WorkersSchema = z
  .object({
    settings: z
      .object({
        pingIntervalMs: z.int().openapi({ description: "Heartbeat period workers are given (RUNPOD_PING_INTERVAL)" }),
        lostAfterMs: z.int().openapi({ description: "Wall ms of silence after which a worker is lost" }),
        pollHoldMs: z.int().openapi({ description: "Wall ms an empty job-take or job-stop poll is held" }),
      })
      .openapi({ description: "config `externalWorkers`, defaults resolved" }),
    endpoints: z.array(z.string()).openapi({ description: 'Endpoints served by worker processes (`"handler": "external"`)' }),
    loadBalancers: z
      .array(z.string())
      .openapi({
        description: 'Load-balancing endpoints served by worker processes (`"type": "LOAD_BALANCER"`, `"handler": "external"`): `minipod worker` gives their processes PORT and registers them',
      }),
    workers: z.array(ExternalWorkerSchema),
  })
  .openapi("ExternalWorkers");

const listWorkers = createRoute({
  method: "get",
  path: "/_emulator/workers",
  operationId: "listExternalWorkers",
  tags: [TAG],
  summary: "Worker processes of external endpoints",
  description: "Every worker process minipod has heard from (lost and stopped ones for 10 minutes), the external endpoints, and the worker settings. `minipod worker` reads it at start.",
  request: { query: z.object({ endpoint: z.string().optional().openapi({ param: { name: "endpoint", in: "query" } }) }) },
  responses: ok(WorkersSchema, "The workers"),
});

const stopWorker = createRoute({
  method: "post",
  path: "/_emulator/workers/{endpoint_id}/{worker_id}/stop",
  operationId: "stopExternalWorker",
  tags: [TAG],
  summary: "Mark a worker process stopped and answer its held polls",
  description:
    "What `minipod worker` calls as it stops a worker process: the worker library waits for its held job-take and job-stop polls before it exits, so they are answered (204) at once. The worker shows as stopped until it calls for work again.",
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: {
    body: NO_PARAMETERS_BODY,
    params: z.object({
      endpoint_id: z.string().openapi({ param: { name: "endpoint_id", in: "path" } }),
      worker_id: z.string().openapi({ param: { name: "worker_id", in: "path" } }),
    }),
  },
  responses: { ...ok(ExternalWorkerSchema, "The worker, now stopped"), 404: ERROR_RESPONSES[404] },
});

const workerExited = createRoute({
  method: "post",
  path: "/_emulator/workers/{endpoint_id}/{worker_id}/exited",
  operationId: "externalWorkerExited",
  tags: [TAG],
  summary: "Tell minipod a worker's process exited",
  description:
    "What `minipod worker` calls when the process it runs exits (a crash, a kill): the worker is lost at once, its jobs go back to the queue, and no job is routed to it, rather than after 3 silent heartbeat periods. A worker that calls again (a restart with the same id) is back.",
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: {
    body: { content: { "application/json": { schema: z.object({ reason: z.string().max(500).optional() }) } } },
    params: z.object({
      endpoint_id: z.string().openapi({ param: { name: "endpoint_id", in: "path" } }),
      worker_id: z.string().openapi({ param: { name: "worker_id", in: "path" } }),
    }),
  },
  responses: { ...ok(ExternalWorkerSchema, "The worker, now lost"), 404: ERROR_RESPONSES[404] },
});

/** The external workers of one endpoint, for views (the dashboard, worker listings). */
export const externalWorkersOf = (core: Pick<Core, "workerProtocol">, endpointId: string): ExternalWorkerView[] => core.workerProtocol.workers.list(endpointId);

/** `GET /_emulator/workers`, `POST /_emulator/workers/{endpoint_id}/{worker_id}/stop`. */
export function workerControlRoutes(core: Pick<Core, "endpoints" | "workerProtocol">, router: OpenAPIHono<AppEnv>): void {
  const protocol = core.workerProtocol;
  router.openapi(listWorkers, (c) => {
    const endpoint = c.req.valid("query").endpoint;
    const { pingIntervalMs, lostAfterMs, pollHoldMs } = protocol.workers.settings;
    const external = (type: EndpointType) =>
      core.endpoints
        .specs(type)
        .filter((s) => s.handler === EXTERNAL_HANDLER)
        .map((s) => s.id);
    const endpoints = external("QUEUE");
    const loadBalancers = external("LOAD_BALANCER");
    return c.json({ settings: { pingIntervalMs, lostAfterMs, pollHoldMs }, endpoints, loadBalancers, workers: protocol.workers.list(endpoint || undefined) }, 200);
  });
  router.openapi(workerExited, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    if (!protocol.workers.get(endpoint_id, worker_id)) throw new EmulatorError("NOT_FOUND", `no worker "${worker_id}" on endpoint "${endpoint_id}"`);
    protocol.workerExited(endpoint_id, worker_id, c.req.valid("json").reason ?? "its process exited");
    const view = protocol.workers.list(endpoint_id).find((w) => w.id === worker_id)!;
    return c.json(view, 200);
  });
  router.openapi(stopWorker, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    protocol.stopWorker(endpoint_id, worker_id);
    const view = protocol.workers.list(endpoint_id).find((w) => w.id === worker_id)!;
    return c.json(view, 200);
  });
}
