import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import { EmulatorError } from "../../../domain/errors.js";
import { JOB_STATUSES, type Job } from "../../../domain/job.js";
import { preloaded, stringifyBody } from "../../../domain/json-text.js";
import { RUN_PAYLOAD_MAX_BYTES } from "../../../domain/limits.js";
import { shownUrl } from "../../../domain/redact.js";
import { jsonBody } from "../../body.js";
import { jobSummary, JobSummarySchema } from "../../job-summary.js";
import type { Core } from "../../core.js";
import { textBody } from "../../large-body.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES, intQuery, NO_PARAMETERS_BODY, NO_PARAMETERS_LIMIT, PAYLOAD_TOO_LARGE_RESPONSE, problem } from "../../schemas.js";
import { SubmissionSchema } from "../queue/schemas.js";

const JSON_TYPE = { "content-type": "application/json" } as const;

const TAG = "Emulator control";
export const JOB_LIST_DEFAULT = 50;
export const JOB_LIST_MAX = 500;
/** The longest text a job list is filtered by (a job id is far shorter). */
export const JOB_ID_QUERY_MAX = 200;
/** A job's detail carries at most this many stream chunks (each may be up to 1 MB). */
export const DETAIL_CHUNKS_MAX = 100;

const Status = z.enum(JOB_STATUSES);


const JobDetailSchema = JobSummarySchema.extend({
  input: z.record(z.string(), z.unknown()),
  output: z.unknown().optional(),
  error: z.string().optional(),
  webhook: z.string().optional(),
  s3Config: z
    .object({ accessId: z.string(), bucketName: z.string(), endpointUrl: z.string(), objectPath: z.string().optional() })
    .optional()
    .openapi({ description: "As submitted, without accessSecret" }),
  policy: z.object({ executionTimeout: z.int(), ttl: z.int(), lowPriority: z.boolean() }),
  expiresAt: z.int().openapi({ description: "createdAt + ttl" }),
  timeoutAt: z.int().optional(),
  retainUntil: z.int().optional(),
  stream: z.array(z.object({ output: z.unknown(), metrics: z.record(z.string(), z.union([z.number(), z.string()])).optional() })),
  streamCount: z.int().openapi({ description: `Chunks the job produced; \`stream\` holds the first ${DETAIL_CHUNKS_MAX}` }),
}).openapi("JobDetail");

const listJobs = createRoute({
  method: "get",
  path: "/_emulator/jobs",
  operationId: "listEmulatorJobs",
  tags: [TAG],
  summary: "Jobs, newest first",
  description: "Every job the emulator holds (any endpoint unless filtered), newest submission first, without payloads. `count` is how many match the filter.",
  request: {
    query: z.object({
      endpoint: z.string().min(1).optional().openapi({ param: { name: "endpoint", in: "query" }, description: "Only this endpoint's jobs" }),
      status: Status.optional().openapi({ param: { name: "status", in: "query" } }),
      id: z.string().min(1).max(JOB_ID_QUERY_MAX).optional().openapi({ param: { name: "id", in: "query" }, description: "Only jobs whose id contains this text (any part of it: its start, its end)" }),
      limit: intQuery().pipe(z.int().min(1).max(JOB_LIST_MAX)).optional().openapi({ param: { name: "limit", in: "query" }, description: `1..${JOB_LIST_MAX}, default ${JOB_LIST_DEFAULT}` }),
      offset: intQuery().pipe(z.int().min(0)).optional().openapi({ param: { name: "offset", in: "query" }, description: "Jobs to skip, default 0" }),
    }),
  },
  responses: {
    200: {
      description: "One page of jobs",
      content: { "application/json": { schema: z.object({ jobs: z.array(JobSummarySchema), count: z.int(), limit: z.int(), offset: z.int() }).openapi("JobPage") } },
    },
    400: ERROR_RESPONSES[400],
  },
});

const getJob = createRoute({
  method: "get",
  path: "/_emulator/jobs/{id}",
  operationId: "getEmulatorJob",
  tags: [TAG],
  summary: "One job in full",
  description: "Input, output or error, stream chunks, times and worker of any job, whatever its endpoint. Never includes `s3Config.accessSecret`.",
  request: { params: z.object({ id: z.string().min(1).openapi({ param: { name: "id", in: "path" } }) }) },
  responses: { 200: { description: "The job", content: { "application/json": { schema: JobDetailSchema } } }, 404: ERROR_RESPONSES[404] },
});

const JobAckSchema = z.object({ id: z.string(), status: Status }).openapi("EmulatorJobAck");
const ACTION_ERRORS = { 400: problem("Malformed request, or the job is not in a state the action applies to"), 404: ERROR_RESPONSES[404] } as const;

/** The timeline's cause for a job submitted through the control API rather than the queue. */
export const CONTROL_SUBMIT_CAUSE = "submitted with /run (control API)";

const submitJob = createRoute({
  method: "post",
  path: "/_emulator/endpoints/{endpoint_id}/run",
  operationId: "submitEmulatorJob",
  tags: [TAG],
  summary: "Submit a job, as POST /v2/{endpoint_id}/run does",
  description:
    "The body, its validation and size limit, the job made and the answer are those of `POST /v2/{endpoint_id}/run`; only the timeline's first cause says it came through the control API. The queue's API keys, rate limits and fault rules do not apply: this is what the dashboard's \"submit\" form sends.",
  middleware: [jsonBody(RUN_PAYLOAD_MAX_BYTES, ["input"])] as const,
  request: {
    params: z.object({ endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "echo" }) }),
    body: { required: true, content: { "application/json": { schema: SubmissionSchema } } },
  },
  responses: {
    200: { description: "The job is queued", content: { "application/json": { schema: JobAckSchema } } },
    400: ERROR_RESPONSES[400],
    404: ERROR_RESPONSES[404],
    ...PAYLOAD_TOO_LARGE_RESPONSE,
  },
});

const jobAction = (action: "cancel" | "retry", summary: string, description: string) =>
  createRoute({
    method: "post",
    path: `/_emulator/jobs/{id}/${action}`,
    operationId: `${action}EmulatorJob`,
    tags: [TAG],
    summary,
    description,
    middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
    request: { params: z.object({ id: z.string().min(1).openapi({ param: { name: "id", in: "path" } }) }), body: NO_PARAMETERS_BODY },
    responses: { 200: { description: "The job after the action", content: { "application/json": { schema: JobAckSchema } } }, ...ACTION_ERRORS },
  });

const cancelJob = jobAction(
  "cancel",
  "Cancel a job, as POST /v2/{endpoint_id}/cancel/{job_id} does",
  "Any endpoint's job by its id alone. A queued or running job is cancelled; a job already final is answered as it is, unchanged.",
);
const retryJob = jobAction(
  "retry",
  "Re-queue a job, as POST /v2/{endpoint_id}/retry/{job_id} does",
  "Any endpoint's job by its id alone. Only a FAILED or TIMED_OUT job can be retried (400 otherwise); it goes back to the queue under the same id with the same input.",
);

/** A job in full for the dashboard; the S3 secret stays out. */
export function jobDetail(core: Pick<Core, "clock" | "jobStore">, job: Job): z.infer<typeof JobDetailSchema> {
  const { accessSecret: _secret, ...s3 } = job.s3Config ?? { accessSecret: "" };
  return {
    ...jobSummary(job, core.clock.now()),
    // A large input kept as text (RawJson) is written as its value: `stringify` splices it in.
    input: job.input as Record<string, unknown>,
    ...(job.output !== undefined ? { output: job.output } : {}),
    ...(job.error !== undefined ? { error: job.error } : {}),
    ...(job.webhook !== undefined ? { webhook: shownUrl(job.webhook) } : {}),
    ...(job.s3Config ? { s3Config: s3 as { accessId: string; bucketName: string; endpointUrl: string; objectPath?: string } } : {}),
    policy: { executionTimeout: job.executionTimeoutMs, ttl: job.ttlMs, lowPriority: job.lowPriority },
    expiresAt: job.expiresAt,
    ...(job.timeoutAt !== undefined ? { timeoutAt: job.timeoutAt } : {}),
    ...(job.retainUntil !== undefined ? { retainUntil: job.retainUntil } : {}),
    stream: core.jobStore.chunks(job.id, 0).slice(0, DETAIL_CHUNKS_MAX),
    streamCount: core.jobStore.chunkCount(job.id),
  };
}

/** The job with this id, or a 404 naming it. */
export function requireJob(core: Pick<Core, "jobStore">, id: string): Job {
  const job = core.jobStore.get(id);
  if (!job) throw new EmulatorError("JOB_NOT_FOUND", `job "${id}" not found (its ttl or result retention may have ended)`);
  return job;
}

/** `GET /_emulator/jobs` and `GET /_emulator/jobs/{id}`. */
export function jobControlRoutes(core: Pick<Core, "clock" | "jobStore" | "jobs">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(listJobs, (c) => {
    const q = c.req.valid("query");
    const limit = q.limit ?? JOB_LIST_DEFAULT;
    const offset = q.offset ?? 0;
    const page = core.jobStore.list({ endpointId: q.endpoint, status: q.status, idContains: q.id, limit, offset });
    const now = core.clock.now();
    return c.json({ jobs: page.jobs.map((j) => jobSummary(j, now)), count: page.total, limit, offset }, 200);
  });

  // `stringify`: a large input or output is written from its text, not stringified again.
  router.openapi(getJob, async (c) => {
    const job = requireJob(core, c.req.valid("param").id);
    await preloaded(job.input, job.output);
    return c.body(textBody(stringifyBody(jobDetail(core, job))), 200, JSON_TYPE) as never;
  });

  // The queue's own operations (JobService), so the rules and the jobs are those of /v2.
  router.openapi(submitJob, (c) => {
    const job = core.jobs.submit(c.req.valid("param").endpoint_id, c.req.valid("json"), "run", CONTROL_SUBMIT_CAUSE);
    return c.json({ id: job.id, status: job.status }, 200);
  });
  router.openapi(cancelJob, (c) => {
    const job = requireJob(core, c.req.valid("param").id);
    const next = core.jobs.cancel(job.endpointId, job.id);
    return c.json({ id: next.id, status: next.status }, 200);
  });
  router.openapi(retryJob, (c) => {
    const job = requireJob(core, c.req.valid("param").id);
    const next = core.jobs.retry(job.endpointId, job.id);
    return c.json({ id: next.id, status: next.status }, 200);
  });
}
