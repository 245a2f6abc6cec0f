import { createRoute, z } from "@hono/zod-openapi";
import { RUNSYNC_PAYLOAD_MAX_BYTES, WORKER_BATCH_MAX } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import { lastQuery, listQuery } from "../../query-params.js";
import { ERROR_RESPONSES, PAYLOAD_TOO_LARGE_RESPONSE, intQuery, json, problem } from "../../schemas.js";

const TAG = "Worker protocol";

const workerId = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, {
    error: (iss) =>
      typeof iss.input === "string" && iss.input.includes("&")
        ? "expected a worker id, got one followed by '&...': the job-take URL (RUNPOD_WEBHOOK_GET_JOB) must end with a query string such as '?gpu=local', because the worker library appends '&job_in_progress=...' to it"
        : "expected a worker id of letters, digits, '.', '_' or '-'",
  })
  .openapi({ param: { name: "worker_id", in: "path" }, example: "worker-1" });

const Params = z.object({
  endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "my-worker" }),
  worker_id: workerId,
});
const JobParams = Params.extend({ job_id: z.string().min(1).openapi({ param: { name: "job_id", in: "path" }, example: "019aab3e-5c21-0000-9f00-112233445566-u1" }) });

const TakenJob = z
  .object({
    id: z.string(),
    input: z.record(z.string(), z.unknown()),
    webhook: z.string().optional(),
    batchId: z.string().optional().openapi({ description: "The batch this job is a request of (batch workers only)" }),
  })
  .openapi("TakenJob");
const Ack = z.object({ id: z.string(), status: z.string() }).openapi("WorkerResultAck");
// Loose: the domain refuses other keys itself (resultProblem), failing the job it ends.
const Result = z.looseObject({ output: z.unknown().optional(), error: z.unknown().optional(), status: z.unknown().optional(), stopPod: z.boolean().optional() }).openapi("WorkerResult", {
  description:
    '`{ "output" }`, `{ "error": "<string>" }` (both when the handler returned both), or progress `{ "status": "IN_PROGRESS", "output" }`; `"stopPod": true` stops the worker after this job (`refresh_worker`). Sent as JSON, whatever the Content-Type (the worker library sends a form type). A result of another shape (an `error` that is not a string, another key, another `status`) is refused with 400 and its job FAILS saying why.',
});

const none = { 204: { description: "Nothing now: the poll was held open as long as the hold allows (or minipod is stopping)" } };
const resultBody = { required: true, content: { "application/json": { schema: Result } } };
const conflict = { 409: problem("The job is not IN_PROGRESS on this worker (done, cancelled, timed out, or re-queued); it is left unchanged") };
const boolFlag = (name: string, description: string) =>
  lastQuery(z.enum(["true", "false", "0", "1"], { error: () => "expected true, false, 0 or 1" }).optional()).openapi({ param: { name, in: "query" }, description });
const isStream = boolFlag(
  "isStream",
  "job-done: `true` ends a job whose chunks went to job-stream (its output is what this post sends: the aggregate, or `[]`; the chunks stay on /stream); repeated, the last counts",
);
const jobInProgress = boolFlag("job_in_progress", "`0`: the worker holds no job (jobs minipod still counts on it go back to the queue)");
const pool = lastQuery(z.enum(["standard", "batch"], { error: () => "expected standard or batch" }).optional()).openapi({
  param: { name: "pool", in: "query" },
  description:
    "`batch`: the worker is one of the endpoint's batch workers and takes batch requests only (minipod gives a worker started with `batch: true` this in its RUNPOD_WEBHOOK_GET_JOB); default: `/run` traffic",
});
const held = "Held open (wall time, `externalWorkers.pollHoldMs`, default 20 s) while there is nothing, and answered at once when something comes.";

export const takeRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/job-take/{worker_id}",
  operationId: "jobTake",
  tags: [TAG],
  summary: "Take the next job (worker processes)",
  description: `Only endpoints with \`"handler": "external"\`. The job moves to IN_PROGRESS on this worker; its execution timeout starts. ${held}`,
  request: { params: Params, query: z.object({ job_in_progress: jobInProgress, pool }) },
  responses: { 200: json(TakenJob, "The job"), ...none, ...ERROR_RESPONSES },
});

export const takeBatchRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/job-take-batch/{worker_id}",
  operationId: "jobTakeBatch",
  tags: [TAG],
  summary: "Take up to batch_size jobs",
  description: held,
  request: {
    params: Params,
    query: z.object({
      batch_size: lastQuery(intQuery().pipe(z.int().min(1).max(WORKER_BATCH_MAX)).optional()).openapi({ param: { name: "batch_size", in: "query" }, example: 4 }),
      job_in_progress: jobInProgress,
      pool,
    }),
  },
  responses: { 200: json(z.array(TakenJob), "The jobs, oldest first"), ...none, ...ERROR_RESPONSES },
});

export const stopRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/job-stop/{worker_id}",
  operationId: "jobStop",
  tags: [TAG],
  summary: "The stop channel: jobs this worker should stop",
  description: `Jobs of this worker that were cancelled, timed out or expired (or re-queued while it was thought lost) since its last poll. ${held}`,
  request: { params: Params },
  responses: { 200: json(z.object({ jobsToStop: z.array(z.string()) }).openapi("JobsToStop"), "Stop these jobs"), ...none, ...ERROR_RESPONSES },
});

const resultQuery = (jobIdInPath: boolean) =>
  z.object({
    jobId: lastQuery(jobIdInPath ? z.string().min(1).optional() : z.string({ error: () => "expected the job id: job-done/{worker_id}/{job_id} or ?jobId=..." }).min(1)).openapi({
      param: { name: "jobId", in: "query" },
      description: jobIdInPath ? "Optional; must match the path's job id" : "The job",
    }),
    isStream,
  });

const resultRoute = (operation: "job-done" | "job-stream", jobIdInPath: boolean) =>
  createRoute({
    method: "post",
    path: `/v2/{endpoint_id}/${operation}/{worker_id}${jobIdInPath ? "/{job_id}" : ""}`,
    operationId: `${operation === "job-done" ? "jobDone" : "jobStream"}${jobIdInPath ? "" : "Query"}`,
    tags: [TAG],
    summary:
      operation === "job-done"
        ? `Post a job's result or progress${jobIdInPath ? " (the platform's URL form)" : " (job id in the query)"}`
        : `Post one stream chunk${jobIdInPath ? " (the platform's URL form)" : " (job id in the query)"}`,
    // A large result stays its text (a chunk is split by size, so it is read as a value).
    middleware: [jsonBody(RUNSYNC_PAYLOAD_MAX_BYTES, operation === "job-done" ? ["output"] : [])] as const,
    request: { params: jobIdInPath ? JobParams : Params, query: resultQuery(jobIdInPath), body: resultBody },
    responses: { 200: json(Ack, "Accepted"), ...conflict, ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE },
  });

export const doneRoute = resultRoute("job-done", true);
export const doneQueryRoute = resultRoute("job-done", false);
export const streamRoute = resultRoute("job-stream", true);
export const streamQueryRoute = resultRoute("job-stream", false);

export const pingRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/ping/{worker_id}",
  operationId: "workerPing",
  tags: [TAG],
  summary: "Heartbeat of a worker process",
  description: "Keeps the worker alive (one silent for `externalWorkers.lostAfterMs` is lost and its jobs go back to the queue). `job_id` lists the jobs it holds.",
  request: {
    params: Params,
    query: z.object({
      job_id: listQuery(z.string().min(1)).openapi({ param: { name: "job_id", in: "query" }, description: "The worker's jobs, comma-separated (the library's form) or repeated" }),
      runpod_version: lastQuery(z.string().optional()).openapi({ param: { name: "runpod_version", in: "query" }, description: "The worker library's version" }),
      status: lastQuery(z.string().optional()).openapi({ param: { name: "status", in: "query" }, description: "`unhealthy`: a start-up check failed" }),
      check: lastQuery(z.string().optional()).openapi({ param: { name: "check", in: "query" } }),
      reason: lastQuery(z.string().optional()).openapi({ param: { name: "reason", in: "query" } }),
    }),
  },
  responses: { 200: json(z.object({ status: z.literal("ok") }), "Seen"), ...ERROR_RESPONSES },
});
