import { z } from "@hono/zod-openapi";
import { BATCH_PAGE_DEFAULT, BATCH_PAGE_MAX } from "../../domain/limits.js";
import { hasCredentials, WEBHOOK_CREDENTIALS_REFUSED, WEBHOOK_PROTOCOL } from "../../domain/webhooks.js";
import { intQuery } from "../../http/schemas.js";
import { SubmissionSchema } from "../../http/routes/queue/schemas.js";
import { BATCH_STATUSES, REQUEST_STATUSES } from "./model.js";

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

export const CreateBatchSchema = z
  .preprocess(asObject, z.strictObject({ name: Name.optional(), webhook: Webhook.optional(), requests: Requests.optional() }))
  .openapi("CreateBatchRequest", { description: "`[]` or `[{ \"input\": ... }, ...]` (the service's form); or `{ \"name\", \"webhook\", \"requests\" }`" });

export const AppendSchema = z
  .preprocess(asObject, z.strictObject({ requests: Requests }))
  .openapi("AppendBatchRequests", { description: "`{ \"requests\": [{ \"input\": ... }, ...] }` (a bare array is taken too)" });

export const UpdateBatchSchema = z
  .strictObject({ name: Name.optional(), webhook: Webhook.nullable().optional() })
  .openapi("UpdateBatchRequest", { description: "Only the fields given change; `webhook: null` removes it" });

export const PageQuery = z.object({
  offset: intQuery().pipe(z.int().min(0)).optional().openapi({ param: { name: "offset", in: "query" }, example: 0 }),
  limit: intQuery()
    .pipe(z.int().min(1).max(BATCH_PAGE_MAX))
    .optional()
    .openapi({ param: { name: "limit", in: "query" }, description: `Default ${BATCH_PAGE_DEFAULT}, at most ${BATCH_PAGE_MAX}`, example: BATCH_PAGE_DEFAULT }),
});

export const BatchSchema = z
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

export const BatchCreatedSchema = BatchSchema.extend({ requestIds: z.array(z.string()).openapi({ description: "The ids of the requests this call added, in order" }) }).openapi("BatchWithNewRequests");

export const BatchRequestSchema = z
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

export const RequestPageSchema = z
  .object({ requests: z.array(BatchRequestSchema), total: z.int(), offset: z.int(), limit: z.int(), hasMore: z.boolean() })
  .openapi("BatchRequestPage");
