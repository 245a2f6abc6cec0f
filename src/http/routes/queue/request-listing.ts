import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { JOB_STATUSES } from "../../../domain/job.js";
import type { JobSummary } from "../../../domain/ports.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES, intQuery, ok } from "../../schemas.js";
import { jobSummary } from "../../job-summary.js";

/** Page sizes of `/requests` (not in the specification: a console shows a page of recent requests). */
export const REQUESTS_PAGE_DEFAULT = 20;
export const REQUESTS_PAGE_MAX = 100;

const RequestSchema = z
  .object({
    id: z.string(),
    status: z.enum(JOB_STATUSES),
    createdAt: z.string().openapi({ description: "Submission, ISO 8601 UTC (virtual time)", example: "2025-01-01T12:00:00.000Z" }),
    delayTime: z.int().optional().openapi({ description: "ms before a worker started it (so far, while queued)" }),
    executionTime: z.int().optional().openapi({ description: "ms the worker ran it (once finished)" }),
    workerId: z.string().optional(),
    retries: z.int().optional().openapi({ description: "Present once the job went back to the queue" }),
  })
  .openapi("EndpointRequest");

const PageSchema = z
  .object({
    requests: z.array(RequestSchema),
    total: z.int().openapi({ description: "Requests that match, on every page" }),
    limit: z.int(),
    offset: z.int(),
  })
  .openapi("EndpointRequests");

const requestsRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/requests",
  operationId: "requests",
  tags: ["Queue"],
  summary: "The endpoint's recent requests (jobs), newest first",
  description:
    "The jobs the endpoint still holds (queued, running, and finished ones within their result retention), newest submission first, one page at a time, without payloads (`/status/{id}` has them). Its shape is minipod's: the specification lists the route only in its limits (10 per 10 s, 2 at once).",
  request: {
    params: z.object({ endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "echo" }) }),
    query: z.object({
      status: z.enum(JOB_STATUSES).optional().openapi({ param: { name: "status", in: "query" }, description: "Only requests in this status" }),
      limit: intQuery()
        .pipe(z.int().min(1).max(REQUESTS_PAGE_MAX))
        .optional()
        .openapi({ param: { name: "limit", in: "query" }, description: `1..${REQUESTS_PAGE_MAX}, default ${REQUESTS_PAGE_DEFAULT}` }),
      offset: intQuery().pipe(z.int().min(0)).optional().openapi({ param: { name: "offset", in: "query" }, description: "Requests to skip, default 0" }),
    }),
  },
  responses: { ...ok(PageSchema, "One page of requests"), ...ERROR_RESPONSES },
});

/** A job as the listing shows it: the dashboard's summary (the same times as `/status`), trimmed to what a console shows. */
function view(job: JobSummary, now: number): z.infer<typeof RequestSchema> {
  const { id, status, createdAt, delayTime, executionTime, workerId, retries } = jobSummary(job, now);
  return {
    id,
    status,
    createdAt: new Date(createdAt).toISOString(),
    ...(delayTime !== undefined ? { delayTime } : {}),
    ...(executionTime !== undefined ? { executionTime } : {}),
    ...(workerId !== undefined ? { workerId } : {}),
    ...(retries > 0 ? { retries } : {}),
  };
}

/** `GET /v2/{endpoint_id}/requests`. */
export function requestsRoutes(core: Pick<Core, "jobs" | "clock">, app: OpenAPIHono<AppEnv>): void {
  app.openapi(requestsRoute, (c) => {
    const { status, limit = REQUESTS_PAGE_DEFAULT, offset = 0 } = c.req.valid("query");
    const page = core.jobs.recent(c.req.valid("param").endpoint_id, { status, limit, offset });
    const now = core.clock.now();
    return c.json({ requests: page.jobs.map((j) => view(j, now)), total: page.total, limit, offset }, 200);
  });
}
