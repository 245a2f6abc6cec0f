import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { describeHandler, type EndpointSpec } from "../../../domain/endpoint.js";
import { JOB_STATUSES } from "../../../domain/job.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { ExternalWorkerSchema, externalWorkersOf } from "./workers.js";

const TAG = "Emulator control";

const WorkerSchema = z
  .object({
    id: z.string(),
    state: z.enum(["initializing", "idle", "running"]),
    jobId: z.string().optional().openapi({ description: "The job a running worker holds" }),
    since: z.int().openapi({ description: "Virtual epoch ms of the worker's last state change" }),
  })
  .openapi("SimulatedWorker");

const JobCountsSchema = z.object(Object.fromEntries(JOB_STATUSES.map((s) => [s, z.int()])) as Record<(typeof JOB_STATUSES)[number], z.ZodInt>).openapi("JobCountsByStatus");

export const EndpointStateSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    handler: z.string().openapi({ description: 'Handler name, module path, or "http URL"' }),
    workersMin: z.int(),
    workersMax: z.int(),
    idleTimeout: z.int().openapi({ description: "Seconds" }),
    coldStartMs: z.int(),
    executionTimeoutMs: z.int().optional(),
    createdAt: z.int(),
    throttled: z.boolean().openapi({ description: "The endpoint cannot scale up (no capacity)" }),
    workers: z.array(WorkerSchema),
    externalWorkers: z.array(ExternalWorkerSchema).optional().openapi({ description: 'Endpoints with `"handler": "external"`: the worker processes that called (see `GET /_emulator/workers`)' }),
    jobs: JobCountsSchema.openapi({ description: "Jobs held for the endpoint, by status; IN_QUEUE is the queue depth" }),
  })
  .openapi("EndpointState");

export type EndpointState = z.infer<typeof EndpointStateSchema>;

const listEndpoints = createRoute({
  method: "get",
  path: "/_emulator/endpoints",
  operationId: "listEmulatorEndpoints",
  tags: [TAG],
  summary: "Served endpoints with their workers and job counts",
  description:
    "Each endpoint's settings, every simulated worker (state and the job it runs) and its jobs counted by status. Management fields (templateId, env, ...) are left out: they may hold secrets.",
  responses: { 200: { description: "The endpoints", content: { "application/json": { schema: z.object({ endpoints: z.array(EndpointStateSchema) }).openapi("EndpointStates") } } } },
});

/** What the endpoints' live state is read from. */
type EndpointsCore = Pick<Core, "endpoints" | "scheduler" | "jobStore"> & Parameters<typeof externalWorkersOf>[0];

/** The live state of every served endpoint, as the dashboard shows it. */
export function endpointStates(core: EndpointsCore): EndpointState[] {
  return core.endpoints.specs("QUEUE").map((spec) => endpointState(core, spec));
}

function endpointState(core: EndpointsCore, spec: EndpointSpec): EndpointState {
  const pool = core.scheduler.pool(spec.id);
  return {
    id: spec.id,
    name: spec.name,
    handler: describeHandler(spec.handler),
    workersMin: spec.workersMin,
    workersMax: spec.workersMax,
    idleTimeout: spec.idleTimeout,
    coldStartMs: spec.coldStartMs,
    ...(spec.executionTimeoutMs !== undefined ? { executionTimeoutMs: spec.executionTimeoutMs } : {}),
    createdAt: spec.createdAt,
    throttled: pool?.throttled ?? false,
    workers: (pool?.list() ?? []).map((w) => ({ id: w.id, state: w.state, ...(w.jobId !== undefined ? { jobId: w.jobId } : {}), since: w.since })),
    ...(pool?.external ? { externalWorkers: externalWorkersOf(core, spec.id) } : {}),
    jobs: core.jobStore.countByStatus(spec.id),
  };
}

/** `GET /_emulator/endpoints`. */
export function endpointControlRoutes(core: EndpointsCore, router: OpenAPIHono<AppEnv>): void {
  router.openapi(listEndpoints, (c) => c.json({ endpoints: endpointStates(core) }, 200));
}
