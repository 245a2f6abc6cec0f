import { createRoute, z } from "@hono/zod-openapi";
import {
  RUN_PAYLOAD_MAX_BYTES,
  RUNSYNC_PAYLOAD_MAX_BYTES,
  RUNSYNC_WAIT_DEFAULT_MS,
  RUNSYNC_WAIT_MAX_MS,
  RUNSYNC_WAIT_MIN_MS,
  STREAM_HOLD_DEFAULT_MS,
  TTL_MAX_MS,
  TTL_MIN_MS,
} from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import { ERROR_RESPONSES, PAYLOAD_TOO_LARGE_RESPONSE, intQuery, ok } from "../../schemas.js";
import { HealthSchema, MetricsSchema, IdStatusSchema, JobViewSchema, PurgeSchema, StreamSchema, SubmissionSchema } from "./schemas.js";

const TAG = "Queue";

const EndpointParams = z.object({
  endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "echo" }),
});
const JobParams = EndpointParams.extend({
  job_id: z.string().min(1).openapi({ param: { name: "job_id", in: "path" }, example: "8f3c2a8e-1b2c-4d5e-9f00-112233445566-u1" }),
});

const waitQuery = (def: number, what: string) =>
  z.object({
    wait: intQuery()
      .pipe(z.int().min(RUNSYNC_WAIT_MIN_MS).max(RUNSYNC_WAIT_MAX_MS))
      .optional()
      .openapi({ param: { name: "wait", in: "query" }, description: `${what} (virtual ms, ${RUNSYNC_WAIT_MIN_MS}..${RUNSYNC_WAIT_MAX_MS}, default ${def})`, example: def }),
  });

const submissionBody = { required: true, content: { "application/json": { schema: SubmissionSchema } } };

export const runRoute = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/run",
  operationId: "run",
  tags: [TAG],
  summary: "Submit a job (asynchronous)",
  middleware: [jsonBody(RUN_PAYLOAD_MAX_BYTES, ["input"])] as const,
  request: { params: EndpointParams, body: submissionBody },
  responses: { ...ok(IdStatusSchema, "The job is queued"), ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE },
});

export const runsyncRoute = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/runsync",
  operationId: "runsync",
  tags: [TAG],
  summary: "Submit a job and wait for its result",
  description: "Holds the request until the job is final or `wait` virtual ms pass, then answers with the job as it is.",
  middleware: [jsonBody(RUNSYNC_PAYLOAD_MAX_BYTES, ["input"])] as const,
  request: { params: EndpointParams, query: waitQuery(RUNSYNC_WAIT_DEFAULT_MS, "How long to wait for the result"), body: submissionBody },
  responses: { ...ok(JobViewSchema, "The job, final or as it is when the wait ended"), ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE },
});

export const statusRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/status/{job_id}",
  operationId: "status",
  tags: [TAG],
  summary: "A job's status and result",
  request: {
    params: JobParams,
    query: z.object({
      ttl: intQuery()
        .pipe(z.int().min(TTL_MIN_MS).max(TTL_MAX_MS))
        .optional()
        .openapi({ param: { name: "ttl", in: "query" }, description: "Sets the job's ttl (ms from submission)" }),
    }),
  },
  responses: { ...ok(JobViewSchema, "The job"), ...ERROR_RESPONSES },
});

export const statusSyncRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/status-sync/{job_id}",
  operationId: "statusSync",
  tags: [TAG],
  summary: "A job's status, held until it is final",
  description: "Like /status, but holds the request up to `wait` virtual ms until the job is final (used by runpod-sdk's runSync).",
  request: { params: JobParams, query: waitQuery(RUNSYNC_WAIT_DEFAULT_MS, "How long to hold the request") },
  responses: { ...ok(JobViewSchema, "The job"), ...ERROR_RESPONSES },
});

export const streamRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/stream/{job_id}",
  operationId: "stream",
  tags: [TAG],
  summary: "Stream chunks produced since the previous call",
  description: `When nothing new is there and the job is not final, the request is held up to \`wait\` virtual ms for the next chunk or the end of the job; without \`wait\`, up to ${STREAM_HOLD_DEFAULT_MS} ms of virtual time and never longer than that in wall time (clients read /stream with a 10 s timeout).`,
  request: { params: JobParams, query: waitQuery(STREAM_HOLD_DEFAULT_MS, "How long to hold an empty poll") },
  responses: { ...ok(StreamSchema, "New stream items and the job status"), ...ERROR_RESPONSES },
});

export const cancelRoute = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/cancel/{job_id}",
  operationId: "cancel",
  tags: [TAG],
  summary: "Cancel a queued or running job",
  request: { params: JobParams },
  responses: { ...ok(IdStatusSchema, "The job is cancelled (a job already final is answered as it is)"), ...ERROR_RESPONSES },
});

export const retryRoute = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/retry/{job_id}",
  operationId: "retry",
  tags: [TAG],
  summary: "Re-queue a FAILED or TIMED_OUT job",
  request: { params: JobParams },
  responses: { ...ok(IdStatusSchema, "The job is back in the queue"), ...ERROR_RESPONSES },
});

export const purgeRoute = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/purge-queue",
  operationId: "purgeQueue",
  tags: [TAG],
  summary: "Remove every queued job",
  request: { params: EndpointParams },
  responses: { ...ok(PurgeSchema, "Queued jobs removed; running jobs go on"), ...ERROR_RESPONSES },
});

export const healthRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/health",
  operationId: "health",
  tags: [TAG],
  summary: "Job and worker counts",
  request: { params: EndpointParams },
  responses: { ...ok(HealthSchema, "Counts"), ...ERROR_RESPONSES },
});

export const metricsRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/metrics",
  operationId: "metrics",
  tags: [TAG],
  summary: "Worker counts and the ready workers' ids (what runpod-flash and the SDK 2.x poll during a call)",
  request: { params: EndpointParams },
  responses: { ...ok(MetricsSchema, "Counts"), ...ERROR_RESPONSES },
});
