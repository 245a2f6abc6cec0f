import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { EmulatorError } from "../../../domain/errors.js";
import { WORKER_OPERATIONS } from "../../../domain/operations.js";
import { jsonBody } from "../../body.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { ERROR_RESPONSES, intQuery, json, NO_PARAMETERS_BODY, NO_PARAMETERS_LIMIT } from "../../schemas.js";

const TAG = "Emulator control";

const Delivery = z
  .object({ jobId: z.string(), endpointId: z.string(), url: z.string(), attempt: z.int(), status: z.int().optional(), error: z.string().optional(), at: z.int() })
  .openapi("WebhookDelivery");
const Entry = z
  .object({
    method: z.string(),
    path: z.string(),
    query: z.string().optional().openapi({ description: "The query string, without its ?" }),
    endpoint: z.string().optional(),
    operation: z.string().optional(),
    status: z.int().openapi({ description: "0 when the connection was dropped by a fault" }),
    at: z.int(),
    durationMs: z.number(),
    body: z.unknown().optional().openapi({ description: "The request body, secrets redacted" }),
    response: z.unknown().optional().openapi({ description: "On errors (status 400 and above): the problem+json answered, or the start of a longer body" }),
  })
  .openapi("JournalEntry");
const Event = z
  .object({ at: z.int(), from: z.string().optional(), to: z.string().optional(), cause: z.string() })
  .openapi("JobEvent");

const webhooks = createRoute({
  method: "get",
  path: "/_emulator/webhooks",
  operationId: "listWebhookDeliveries",
  tags: [TAG],
  summary: "Every webhook attempt",
  request: { query: z.object({ jobId: z.string().optional().openapi({ param: { name: "jobId", in: "query" } }) }) },
  responses: { 200: json(z.object({ deliveries: z.array(Delivery), count: z.int() }), "Attempts, oldest first") },
});
const requests = createRoute({
  method: "get",
  path: "/_emulator/requests",
  operationId: "listRequests",
  tags: [TAG],
  summary: "The request journal",
  request: {
    query: z.object({
      endpoint: z.string().optional().openapi({ param: { name: "endpoint", in: "query" } }),
      operation: z.string().optional().openapi({ param: { name: "operation", in: "query" } }),
      status: intQuery().optional().openapi({ param: { name: "status", in: "query" } }),
      worker: z
        .enum(["exclude", "only"])
        .optional()
        .openapi({
          param: { name: "worker", in: "query" },
          description: `The worker protocol's requests (${[...WORKER_OPERATIONS].join(", ")}): \`exclude\` leaves them out, \`only\` keeps them alone; both by default. \`count\` and \`limit\` apply after this filter`,
        }),
      limit: intQuery()
        .pipe(z.int().min(1).max(10_000))
        .optional()
        .openapi({ param: { name: "limit", in: "query" }, description: "Newest entries kept (default 1000)" }),
    }),
  },
  responses: { 200: json(z.object({ requests: z.array(Entry), count: z.int() }), "Matching requests, oldest first; count is every match"), 400: ERROR_RESPONSES[400] },
});
const clearRequests = createRoute({
  method: "delete",
  path: "/_emulator/requests",
  operationId: "clearRequests",
  tags: [TAG],
  summary: "Empty the request journal",
  responses: { 200: json(z.object({ removed: z.int() }), "Removed") },
});
const events = createRoute({
  method: "get",
  path: "/_emulator/jobs/{id}/events",
  operationId: "jobEvents",
  tags: [TAG],
  summary: "A job's timeline",
  description: "Every transition with its virtual time and cause; kept after the job itself is gone (ttl, retention).",
  request: { params: z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) }) },
  responses: { 200: json(z.object({ jobId: z.string(), events: z.array(Event) }), "The timeline"), 404: ERROR_RESPONSES[404] },
});
const idle = createRoute({
  method: "post",
  path: "/_emulator/run-until-idle",
  operationId: "runUntilIdle",
  tags: [TAG],
  summary: "Advance until nothing waits or runs",
  description: "Advances the clock timer by timer until no job is queued or running and no webhook retry is due (at most 7 virtual days).",
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: { body: NO_PARAMETERS_BODY },
  responses: { 200: json(z.object({ now: z.int(), advancedMs: z.int() }), "Where the clock stopped") },
});

/** Webhook attempts, the request journal, job timelines and run-until-idle. */
export function observeRoutes(core: Pick<Core, "clock" | "observe" | "runUntilIdle">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(webhooks, (c) => {
    const deliveries = core.observe.deliveries(c.req.valid("query").jobId).map(strip);
    return c.json({ deliveries, count: deliveries.length }, 200);
  });
  router.openapi(requests, (c) => {
    const r = core.observe.requests(c.req.valid("query"));
    return c.json({ count: r.count, requests: r.requests.map(strip) }, 200);
  });
  router.openapi(clearRequests, (c) => c.json({ removed: core.observe.clearRequests() }, 200));
  router.openapi(events, (c) => {
    const { id } = c.req.valid("param");
    const list = core.observe.events(id);
    if (list.length === 0) throw new EmulatorError("JOB_NOT_FOUND", `no events recorded for job "${id}"`);
    return c.json({ jobId: id, events: list.map(({ at, from, to, cause }) => strip({ at, from, to, cause })) }, 200);
  });
  router.openapi(idle, async (c) => {
    const before = core.clock.now();
    await core.runUntilIdle();
    return c.json({ now: core.clock.now(), advancedMs: core.clock.now() - before }, 200);
  });
}

/** Drops undefined fields so answers stay small and match the schemas. */
function strip<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
