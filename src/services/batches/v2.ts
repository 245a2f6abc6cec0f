import { z, createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { BATCH_PAGE_DEFAULT, BATCH_PAGE_MAX, BATCH_APPEND_MAX_BYTES } from "../../domain/limits.js";
import { hasCredentials, WEBHOOK_CREDENTIALS_REFUSED, WEBHOOK_PROTOCOL } from "../../domain/webhooks.js";
import { intQuery, ERROR_RESPONSES, PAYLOAD_TOO_LARGE_RESPONSE, json, problem } from "../../http/schemas.js";
import { SubmissionSchema } from "../../http/routes/queue/schemas.js";
import { BATCH_STATUSES, REQUEST_STATUSES, type Batch, type BatchRequestView } from "./record.js";
import { stringify } from "../../domain/json-text.js";
import { jsonBody } from "../../http/body.js";
import type { AppEnv } from "../../http/env.js";
import type { ViewContext } from "../shared/service.js";
import type { BatchService } from "./model.js";
import { routeHead } from "../shared/rest.js";

export const EndpointParams = z.object({
  endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "echo" }),
});
export const BatchParams = EndpointParams.extend({
  batch_id: z.string().min(1).openapi({ param: { name: "batch_id", in: "path" }, example: "batch_01j9abc123xyzq" }),
});
export const RequestParams = BatchParams.extend({
  request_id: z.string().min(1).openapi({ param: { name: "request_id", in: "path" }, example: "req_abc001xyzqwert" }),
});

const Webhook = z
  .url({ protocol: WEBHOOK_PROTOCOL, error: "expected an http:// or https:// URL" })
  .refine((url) => !hasCredentials(url), WEBHOOK_CREDENTIALS_REFUSED)
  .openapi({ description: "POSTed the batch (with its counters and `event`: batch.completed, batch.failed or batch.cancelled) once, when it ends" });

const Name = z.string().min(1).max(256).openapi({ example: "nightly-embeddings-2026-07-09" });

/** Requests as `/run` takes them: `{ "input": ... }` each. */
const Requests = z.array(SubmissionSchema);

/** The create body: a bare array of requests (the service's form), or an object that may also name the batch. */
/**
 * A bare array of requests is read as `{ "requests": [...] }`: one schema then checks both forms,
 * so a bad request is named by its place (`$.requests[3].input`) rather than "no form matched".
 */
const asObject = (v: unknown) => (Array.isArray(v) ? { requests: v } : v);

export const CreateBatchV2Schema = z
  .preprocess(asObject, z.strictObject({ name: Name.optional(), webhook: Webhook.optional(), requests: Requests.optional() }))
  .openapi("CreateBatchRequest", { description: "`[]` or `[{ \"input\": ... }, ...]` (the service's form); or `{ \"name\", \"webhook\", \"requests\" }`" });

export const AppendBatchV2Schema = z
  .preprocess(asObject, z.strictObject({ requests: Requests }))
  .openapi("AppendBatchRequests", { description: "`{ \"requests\": [{ \"input\": ... }, ...] }` (a bare array is taken too)" });

export const UpdateBatchV2Schema = z
  .strictObject({ name: Name.optional(), webhook: Webhook.nullable().optional() })
  .openapi("UpdateBatchRequest", { description: "Only the fields given change; `webhook: null` removes it" });

export const PageQuery = z.object({
  offset: intQuery().pipe(z.int().min(0)).optional().openapi({ param: { name: "offset", in: "query" }, example: 0 }),
  limit: intQuery()
    .pipe(z.int().min(1).max(BATCH_PAGE_MAX))
    .optional()
    .openapi({ param: { name: "limit", in: "query" }, description: `Default ${BATCH_PAGE_DEFAULT}, at most ${BATCH_PAGE_MAX}`, example: BATCH_PAGE_DEFAULT }),
});

export const BatchV2Schema = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    name: z.string().optional(),
    status: z.enum(BATCH_STATUSES),
    requestTotal: z.int(),
    requestInProgress: z.int(),
    requestCompleted: z.int(),
    requestFailed: z.int(),
    webhook: z.string().optional(),
    error: z.string().optional().openapi({ description: "Why a FAILED batch failed" }),
    cancelRequested: z.boolean().optional().openapi({ description: "Cancelled while requests ran: CANCELLED once they finish" }),
    createdAt: z.int().openapi({ description: "Unix epoch ms" }),
    finalizedAt: z.int().optional(),
    endedAt: z.int().optional().openapi({ description: "When every request was done, or the batch FAILED or was CANCELLED" }),
  })
  .openapi("Batch");

export const BatchCreatedV2Schema = BatchV2Schema.extend({
  requestIds: z.array(z.string()).openapi({ description: "The ids of the requests this call added, in order" }),
}).openapi("BatchWithNewRequests");

export const BatchRequestV2Schema = z
  .object({
    id: z.string(),
    status: z.enum(REQUEST_STATUSES).openapi({ description: "PENDING while the batch is a draft; then its job's status" }),
    input: z.record(z.string(), z.unknown()).optional().openapi({ description: "On a single request's read" }),
    output: z.unknown().optional(),
    error: z.string().optional(),
    workerId: z.string().optional(),
    retries: z.int().optional(),
    startedAt: z.string().optional().openapi({ description: "ISO 8601" }),
    completedAt: z.string().optional().openapi({ description: "ISO 8601" }),
  })
  .openapi("BatchRequest");

export const RequestPageV2Schema = z
  .object({ requests: z.array(BatchRequestV2Schema), total: z.int(), offset: z.int(), limit: z.int(), hasMore: z.boolean() })
  .openapi("BatchRequestPage");

const TAG = "Batches";
/** A name and a webhook URL. */
const ATTRIBUTES_MAX_BYTES = 64 * 1024;
const base = "/v2/{endpoint_id}/batch";
const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const appendLimit = jsonBody(BATCH_APPEND_MAX_BYTES);
const notFound = { 404: problem("No such endpoint, batch or request") };
const conflict = { 409: problem("The batch is not in a state that allows this (only a DRAFT takes changes; an ended batch cannot be cancelled)") };
const limits = { 429: problem("The endpoint has its most active batches (10)") };

const route = routeHead(TAG);

export const createBatchRoute = createRoute({
  ...route("post", base, "createBatch", "Create a batch (DRAFT), optionally with its first requests"),
  middleware: [appendLimit] as const,
  request: { params: EndpointParams, body: body(CreateBatchV2Schema) },
  responses: { 200: json(BatchCreatedV2Schema, "The new DRAFT batch"), ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE, ...notFound, ...limits },
});
export const listBatchesRoute = createRoute({
  ...route("get", base, "listBatches", "The endpoint's batches, newest first"),
  request: { params: EndpointParams },
  responses: { 200: json(z.object({ batches: z.array(BatchV2Schema) }).openapi("BatchList"), "Its batches"), ...ERROR_RESPONSES, ...notFound },
});
export const getBatchRoute = createRoute({
  ...route("get", `${base}/{batch_id}`, "getBatch", "A batch and its counters"),
  description: "A FINALIZED batch is done when `requestCompleted + requestFailed == requestTotal` (it has no RUNNING or COMPLETED status).",
  request: { params: BatchParams },
  responses: { 200: json(BatchV2Schema, "The batch"), ...ERROR_RESPONSES, ...notFound },
});
export const updateBatchRoute = createRoute({
  ...route("put", `${base}/{batch_id}`, "updateBatch", "Change a batch's name or webhook"),
  middleware: [jsonBody(ATTRIBUTES_MAX_BYTES)] as const,
  request: { params: BatchParams, body: body(UpdateBatchV2Schema) },
  responses: { 200: json(BatchV2Schema, "The batch"), ...ERROR_RESPONSES, ...notFound },
});
export const appendRoute = createRoute({
  ...route("post", `${base}/{batch_id}/requests`, "appendBatchRequests", "Append requests to a DRAFT batch"),
  description: "At most 10 MiB per call and 5,000 requests per batch.",
  middleware: [appendLimit] as const,
  request: { params: BatchParams, body: body(AppendBatchV2Schema) },
  responses: { 200: json(BatchCreatedV2Schema, "The batch, and the new requests' ids"), ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE, ...notFound, ...conflict },
});
export const listRequestsRoute = createRoute({
  ...route("get", `${base}/{batch_id}/requests`, "listBatchRequests", "A page of a batch's requests, in the order they were added"),
  request: { params: BatchParams, query: PageQuery },
  responses: { 200: json(RequestPageV2Schema, "One page"), ...ERROR_RESPONSES, ...notFound },
});
export const getRequestRoute = createRoute({
  ...route("get", `${base}/{batch_id}/requests/{request_id}`, "getBatchRequest", "One request of a batch, with its input"),
  request: { params: RequestParams },
  responses: { 200: json(BatchRequestV2Schema, "The request"), ...ERROR_RESPONSES, ...notFound },
});
export const replaceRequestRoute = createRoute({
  ...route("put", `${base}/{batch_id}/requests/{request_id}`, "replaceBatchRequest", "Change one request of a DRAFT batch"),
  middleware: [appendLimit] as const,
  request: { params: RequestParams, body: body(SubmissionSchema) },
  responses: { 200: json(BatchRequestV2Schema, "The request"), ...ERROR_RESPONSES, ...PAYLOAD_TOO_LARGE_RESPONSE, ...notFound, ...conflict },
});
export const removeRequestRoute = createRoute({
  ...route("delete", `${base}/{batch_id}/requests/{request_id}`, "removeBatchRequest", "Remove one request of a DRAFT batch"),
  request: { params: RequestParams },
  responses: { 200: json(BatchV2Schema, "The batch"), ...ERROR_RESPONSES, ...notFound, ...conflict },
});
export const finalizeRoute = createRoute({
  ...route("post", `${base}/{batch_id}/finalize`, "finalizeBatch", "Lock a DRAFT batch and queue its requests on the batch workers"),
  request: { params: BatchParams },
  responses: { 200: json(BatchV2Schema, "The FINALIZED batch"), ...ERROR_RESPONSES, ...notFound, ...conflict },
});
export const cancelRoute = createRoute({
  ...route("post", `${base}/{batch_id}/cancel`, "cancelBatch", "Cancel a batch"),
  description: "Queued requests are cancelled at once; running ones finish, then the batch is CANCELLED.",
  request: { params: BatchParams },
  responses: { 200: json(BatchV2Schema, "The batch"), ...ERROR_RESPONSES, ...notFound, ...conflict },
});

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

const JSON_TYPE = { "content-type": "application/json" } as const;

/** A batch as the API shows it: the stored batch and its counters. */
export function showBatch(batches: BatchService, b: Batch): z.infer<typeof BatchV2Schema> {
  const { requestTotal: _t, ...rest } = b;
  return { ...rest, ...batches.counts(b) };
}

/** A request as the API shows it (times in ISO 8601, as the service's examples). */
export function showRequest(r: BatchRequestView): z.infer<typeof BatchRequestV2Schema> {
  const { startedAt, completedAt, input, ...rest } = r;
  // A large input or output is kept as its text (RawJson): `stringify` writes it as its value.
  return {
    ...rest,
    ...(input === undefined ? {} : { input: input as Record<string, unknown> }),
    ...(startedAt === undefined ? {} : { startedAt: iso(startedAt) }),
    ...(completedAt === undefined ? {} : { completedAt: iso(completedAt) }),
  };
}

/** The batch routes of the queue surface (`/v2/{endpoint_id}/batch...`). */
export function batchRoutes(views: Pick<ViewContext, "batches">, router: OpenAPIHono<AppEnv>): void {
  const batches = views.batches;
  const show = (b: Batch) => showBatch(batches, b);

  router.openapi(createBatchRoute, (c) => {
    const b = c.req.valid("json");
    const { endpoint_id } = c.req.valid("param");
    const { batch, added } = batches.create(endpoint_id, { name: b.name, webhook: b.webhook }, b.requests ?? []);
    return c.json({ ...show(batch), requestIds: added }, 200);
  });
  router.openapi(listBatchesRoute, (c) => c.json({ batches: batches.list(c.req.valid("param").endpoint_id).map(show) }, 200));
  router.openapi(getBatchRoute, (c) => {
    const p = c.req.valid("param");
    return c.json(show(batches.get(p.endpoint_id, p.batch_id)), 200);
  });
  router.openapi(updateBatchRoute, (c) => {
    const p = c.req.valid("param");
    return c.json(show(batches.update(p.endpoint_id, p.batch_id, c.req.valid("json"))), 200);
  });
  router.openapi(appendRoute, (c) => {
    const p = c.req.valid("param");
    const b = c.req.valid("json");
    const { batch, added } = batches.append(p.endpoint_id, p.batch_id, b.requests);
    return c.json({ ...show(batch), requestIds: added }, 200);
  });
  router.openapi(listRequestsRoute, (c) => {
    const p = c.req.valid("param");
    const q = c.req.valid("query");
    const offset = q.offset ?? 0;
    const limit = q.limit ?? BATCH_PAGE_DEFAULT;
    const page = batches.requests(p.endpoint_id, p.batch_id, offset, limit);
    return c.body(stringify({ requests: page.requests.map(showRequest), total: page.total, offset, limit, hasMore: offset + page.requests.length < page.total }), 200, JSON_TYPE) as never;
  });
  router.openapi(getRequestRoute, (c) => {
    const p = c.req.valid("param");
    return c.body(stringify(showRequest(batches.request(p.endpoint_id, p.batch_id, p.request_id))), 200, JSON_TYPE) as never;
  });
  router.openapi(replaceRequestRoute, (c) => {
    const p = c.req.valid("param");
    return c.json(showRequest(batches.replaceRequest(p.endpoint_id, p.batch_id, p.request_id, c.req.valid("json"))), 200);
  });
  router.openapi(removeRequestRoute, (c) => {
    const p = c.req.valid("param");
    return c.json(show(batches.removeRequest(p.endpoint_id, p.batch_id, p.request_id)), 200);
  });
  router.openapi(finalizeRoute, (c) => {
    const p = c.req.valid("param");
    return c.json(show(batches.finalize(p.endpoint_id, p.batch_id)), 200);
  });
  router.openapi(cancelRoute, (c) => {
    const p = c.req.valid("param");
    return c.json(show(batches.cancel(p.endpoint_id, p.batch_id)), 200);
  });
}
