import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { RUNSYNC_PAYLOAD_MAX_BYTES } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES, PAYLOAD_TOO_LARGE_RESPONSE, intQuery, problem, json } from "../../schemas.js";

const TAG = "Worker protocol";
const Params = z.object({
  endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "my-worker" }),
  worker_id: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "expected a worker id of letters, digits, '.', '_' or '-'").openapi({ param: { name: "worker_id", in: "path" }, example: "worker-1" }),
});
const TakenJob = z.object({ id: z.string(), input: z.record(z.string(), z.unknown()), webhook: z.string().optional() }).openapi("TakenJob");
const Ack = z.object({ id: z.string(), status: z.string() }).openapi("WorkerResultAck");
const Result = z
  .object({ output: z.unknown().optional(), error: z.unknown().optional(), status: z.string().optional() })
  .openapi("WorkerResult", { description: '`{ "output" }`, `{ "error" }`, or progress `{ "status": "IN_PROGRESS", "output" }`' });
const none = { 204: { description: "No job is waiting" } };
const resultBody = { required: true, content: { "application/json": { schema: Result } } };
const doneQuery = z.object({
  jobId: z.string().min(1).openapi({ param: { name: "jobId", in: "query" } }),
  isStream: z.enum(["true", "false"]).optional().openapi({ param: { name: "isStream", in: "query" }, description: "true: the body is one stream chunk" }),
});
const conflict = { 409: problem("The job is not IN_PROGRESS on this worker (done, cancelled, timed out); it is left unchanged") };

const take = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/job-take/{worker_id}",
  operationId: "jobTake",
  tags: [TAG],
  summary: "Take the next job (worker processes)",
  description: 'Only endpoints with `"handler": "external"`. The job moves to IN_PROGRESS on this worker; its execution timeout starts.',
  request: { params: Params },
  responses: { 200: json(TakenJob, "The job"), ...none, ...ERROR_RESPONSES },
});
const takeBatch = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/job-take-batch/{worker_id}",
  operationId: "jobTakeBatch",
  tags: [TAG],
  summary: "Take up to batch_size jobs",
  request: {
    params: Params,
    query: z.object({ batch_size: intQuery().pipe(z.int().min(1).max(100)).optional().openapi({ param: { name: "batch_size", in: "query" }, example: 4 }) }),
  },
  responses: { 200: json(z.array(TakenJob), "The jobs, oldest first"), ...none, ...ERROR_RESPONSES },
});
const done = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/job-done/{worker_id}",
  operationId: "jobDone",
  tags: [TAG],
  summary: "Post a result, a stream chunk or progress",
  middleware: [jsonBody(RUNSYNC_PAYLOAD_MAX_BYTES)] as const,
  request: { params: Params, query: doneQuery, body: resultBody },
  responses: { 200: json(Ack, "Accepted"), ...conflict, ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE },
});
const stream = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/job-stream/{worker_id}",
  operationId: "jobStream",
  tags: [TAG],
  summary: "Post one stream chunk",
  middleware: [jsonBody(RUNSYNC_PAYLOAD_MAX_BYTES)] as const,
  request: { params: Params, query: doneQuery, body: resultBody },
  responses: { 200: json(Ack, "Accepted"), ...conflict, ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE },
});
const ping = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/ping/{worker_id}",
  operationId: "workerPing",
  tags: [TAG],
  summary: "Heartbeat of a worker process",
  request: { params: Params },
  responses: { 200: json(z.object({ status: z.literal("ok") }), "Seen"), ...ERROR_RESPONSES },
});

const shape = (j: { id: string; input: Record<string, unknown>; webhook: string | undefined }) => ({ id: j.id, input: j.input, ...(j.webhook ? { webhook: j.webhook } : {}) });

/** The routes real worker processes call to fetch jobs and hand back results. */
export function workerRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const w = core.workerProtocol;
  router.openapi(take, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const [job] = w.take(endpoint_id, worker_id, 1);
    return job ? c.json(shape(job), 200) : c.body(null, 204);
  });
  router.openapi(takeBatch, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const jobs = w.take(endpoint_id, worker_id, c.req.valid("query").batch_size ?? 1);
    return jobs.length ? c.json(jobs.map(shape), 200) : c.body(null, 204);
  });
  router.openapi(done, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const { jobId, isStream } = c.req.valid("query");
    const job = w.done(endpoint_id, worker_id, jobId, c.req.valid("json"), isStream === "true");
    return c.json({ id: job.id, status: job.status }, 200);
  });
  router.openapi(stream, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    const job = w.done(endpoint_id, worker_id, c.req.valid("query").jobId, c.req.valid("json"), true);
    return c.json({ id: job.id, status: job.status }, 200);
  });
  router.openapi(ping, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    w.ping(endpoint_id, worker_id);
    return c.json({ status: "ok" as const }, 200);
  });
}
