import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { BUCKET_SIZES } from "./buckets.js";
import { timeQuery, listQuery } from "../../http/query-params.js";
import { DATA_CENTER_IDS, GPU_TYPE_IDS } from "../shared/catalog/catalog.js";
import type { AppEnv } from "../../http/env.js";
import { report, serveReports, V1 } from "../shared/rest.js";
import { billingV2Reports, type BillingReads } from "./v2.js";

export const TAG = "Billing";

const amount = () => z.number().openapi({ description: "USD at the configured prices, rounded to 6 decimal places", example: 0.69 });
const time = () => z.string().openapi({ description: "Start of the bucket (UTC), ISO 8601", example: "2023-01-01T00:00:00.000Z" });

/** v1 pod and serverless billing record. */
export const BillingRecordV1Schema = z
  .object({
    time: time(),
    amount: amount(),
    timeBilledMs: z.int().openapi({ description: "Time billed in the bucket, ms", example: 3_600_000 }),
    endpointId: z.string().optional().openapi({ description: "When grouping by endpointId" }),
    podId: z.string().optional().openapi({ description: "When grouping by podId (for endpoints: the worker id)" }),
    gpuTypeId: z.string().optional().openapi({ description: "When grouping by gpuTypeId (absent for CPU usage)" }),
  })
  .openapi("BillingRecord");

/** v1 network volume billing record. */
export const NetworkVolumeBillingRecordV1Schema = z
  .object({
    time: time(),
    amount: amount(),
    diskSpaceBilledGb: z.int().openapi({ description: "GB billed: each volume once, at its largest size in the bucket" }),
    highPerformanceStorageAmount: amount(),
    highPerformanceStorageDiskSpaceBilledGb: z.int(),
  })
  .openapi("NetworkVolumeBillingRecord");

/** The billing window of both versions: bucket size, start and end. */
export const windowQuery = {
  bucketSize: z.enum(BUCKET_SIZES).default("day").openapi({ description: "Length of each bucket (UTC; weeks start on Monday)" }),
  startTime: timeQuery().openapi({ description: "Start of the period (RFC 3339); default 30 days before endTime; snapped down to its bucket's start", example: "2023-01-01T00:00:00Z" }),
  endTime: timeQuery().openapi({ description: "End of the period, exclusive (RFC 3339); default now (virtual); snapped up to its bucket's end", example: "2023-01-31T23:59:59Z" }),
};

const iso = <T extends { time: number }>(r: T): Omit<T, "time"> & { time: string } => ({ ...r, time: new Date(r.time).toISOString() });

/** v1 billing history, computed from recorded usage; v2's (v2.ts) reads the same model. */
export const billingReports = [
  report({
    version: V1,
    path: "billing/pods",
    operationId: "PodBilling",
    docs: { summary: "Pod billing history", description: "A pod bills its GPUs (or vCPUs) while RUNNING. One record per bucket and group, buckets with usage only, oldest first." },
    query: z.object({ ...windowQuery, grouping: z.enum(["podId", "gpuTypeId"]).default("gpuTypeId"), podId: z.string().optional(), gpuTypeId: z.enum(GPU_TYPE_IDS).optional() }),
    schema: z.array(BillingRecordV1Schema),
    run: (core: BillingReads, q) => core.billing.pods(q).map(iso),
  }),
  report({
    version: V1,
    path: "billing/endpoints",
    operationId: "EndpointBilling",
    docs: {
      summary: "Serverless billing history",
      description:
        "A worker bills its GPUs from its creation (cold start included) until it is scaled down, idle time too; its GPU type is the first of its endpoint's gpuTypeIds. One record per bucket and group, buckets with usage only, oldest first.",
    },
    query: z.object({
      ...windowQuery,
      grouping: z.enum(["endpointId", "podId", "gpuTypeId"]).default("endpointId"),
      endpointId: z.string().optional(),
      gpuTypeId: listQuery(z.enum(GPU_TYPE_IDS)),
      dataCenterId: listQuery(z.enum(DATA_CENTER_IDS)),
      templateId: z.string().optional(),
      imageName: z.string().optional(),
    }),
    schema: z.array(BillingRecordV1Schema),
    run: (core: BillingReads, q) => core.billing.endpoints(q).map(iso),
  }),
  report({
    version: V1,
    path: "billing/networkvolumes",
    operationId: "NetworkVolumeBilling",
    docs: {
      summary: "Network volume billing history",
      description: "GB-hours of every volume at the per-GB-month price of its type (a month is 30 days). One record per bucket with storage, oldest first.",
    },
    query: z.object(windowQuery),
    schema: z.array(NetworkVolumeBillingRecordV1Schema),
    run: (core: BillingReads, q) => core.billing.networkVolumes(q).map(iso),
  }),
];

export function billingRoutes(core: BillingReads, router: OpenAPIHono<AppEnv>): void {
  serveReports(core, router, TAG, [...billingV2Reports, ...billingReports]);
}
