import { createRoute, z } from "@hono/zod-openapi";
import { DATA_CENTER_IDS, GPU_TYPE_IDS } from "../../../domain/management/catalog.js";
import { BUCKET_SIZES } from "../../../domain/management/buckets.js";
import { listQuery, timeQuery } from "../../query-params.js";
import { ERROR_RESPONSES, json } from "../../schemas.js";

const TAG = "Billing";

const { 404: _notFound, ...errors } = ERROR_RESPONSES;

const amount = () => z.number().openapi({ description: "USD at the configured prices, rounded to 6 decimal places", example: 0.69 });
const time = () => z.string().openapi({ description: "Start of the bucket (UTC), ISO 8601", example: "2023-01-01T00:00:00.000Z" });

export const BillingRecordSchema = z
  .object({
    time: time(),
    amount: amount(),
    timeBilledMs: z.int().openapi({ description: "Time billed in the bucket, ms", example: 3_600_000 }),
    endpointId: z.string().optional().openapi({ description: "When grouping by endpointId" }),
    podId: z.string().optional().openapi({ description: "When grouping by podId (for endpoints: the worker id)" }),
    gpuTypeId: z.string().optional().openapi({ description: "When grouping by gpuTypeId (absent for CPU usage)" }),
  })
  .openapi("BillingRecord");

export const NetworkVolumeBillingRecordSchema = z
  .object({
    time: time(),
    amount: amount(),
    diskSpaceBilledGb: z.int().openapi({ description: "GB billed: each volume once, at its largest size in the bucket" }),
    highPerformanceStorageAmount: amount(),
    highPerformanceStorageDiskSpaceBilledGb: z.int(),
  })
  .openapi("NetworkVolumeBillingRecord");

const windowQuery = {
  bucketSize: z.enum(BUCKET_SIZES).default("day").openapi({ description: "Length of each bucket (UTC; weeks start on Monday)" }),
  startTime: timeQuery().openapi({ description: "Start of the period (RFC 3339); default 30 days before endTime; snapped down to its bucket's start", example: "2023-01-01T00:00:00Z" }),
  endTime: timeQuery().openapi({ description: "End of the period, exclusive (RFC 3339); default now (virtual); snapped up to its bucket's end", example: "2023-01-31T23:59:59Z" }),
};

export const podBilling = createRoute({
  method: "get",
  path: "/v1/billing/pods",
  operationId: "PodBilling",
  tags: [TAG],
  summary: "Pod billing history",
  description: "A pod bills its GPUs (or vCPUs) while RUNNING. One record per bucket and group, buckets with usage only, oldest first.",
  request: {
    query: z.object({
      ...windowQuery,
      grouping: z.enum(["podId", "gpuTypeId"]).default("gpuTypeId"),
      podId: z.string().optional(),
      gpuTypeId: z.enum(GPU_TYPE_IDS).optional(),
    }),
  },
  responses: { 200: json(z.array(BillingRecordSchema), "Billing records"), ...errors },
});

export const endpointBilling = createRoute({
  method: "get",
  path: "/v1/billing/endpoints",
  operationId: "EndpointBilling",
  tags: [TAG],
  summary: "Serverless billing history",
  description:
    "A worker bills its GPUs from its creation (cold start included) until it is scaled down, idle time too; its GPU type is the first of its endpoint's gpuTypeIds. One record per bucket and group, buckets with usage only, oldest first.",
  request: {
    query: z.object({
      ...windowQuery,
      grouping: z.enum(["endpointId", "podId", "gpuTypeId"]).default("endpointId"),
      endpointId: z.string().optional(),
      gpuTypeId: listQuery(z.enum(GPU_TYPE_IDS)),
      dataCenterId: listQuery(z.enum(DATA_CENTER_IDS)),
      templateId: z.string().optional(),
      imageName: z.string().optional(),
    }),
  },
  responses: { 200: json(z.array(BillingRecordSchema), "Billing records"), ...errors },
});

export const networkVolumeBilling = createRoute({
  method: "get",
  path: "/v1/billing/networkvolumes",
  operationId: "NetworkVolumeBilling",
  tags: [TAG],
  summary: "Network volume billing history",
  description: "GB-hours of every volume at the per-GB-month price of its type (a month is 30 days). One record per bucket with storage, oldest first.",
  request: { query: z.object(windowQuery) },
  responses: { 200: json(z.array(NetworkVolumeBillingRecordSchema), "Billing records"), ...errors },
});
