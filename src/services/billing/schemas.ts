import { z } from "@hono/zod-openapi";
import { BUCKET_SIZES } from "./buckets.js";
import { timeQuery } from "../../http/query-params.js";

export const TAG = "Billing";

const amount = () => z.number().openapi({ description: "USD at the configured prices, rounded to 6 decimal places", example: 0.69 });
const time = () => z.string().openapi({ description: "Start of the bucket (UTC), ISO 8601", example: "2023-01-01T00:00:00.000Z" });

/** v1 pod and serverless billing record. */
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

/** v1 network volume billing record. */
export const NetworkVolumeBillingRecordSchema = z
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
