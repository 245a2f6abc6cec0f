import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { DATA_CENTER_IDS, GPU_TYPE_IDS } from "../shared/catalog/catalog.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { listQuery } from "../../http/query-params.js";
import { report, serveReports, V1 } from "../shared/rest.js";
import { BillingRecordSchema, NetworkVolumeBillingRecordSchema, TAG, windowQuery } from "./schemas.js";
import { billingV2Reports } from "./v2.js";

const iso = <T extends { time: number }>(r: T): Omit<T, "time"> & { time: string } => ({ ...r, time: new Date(r.time).toISOString() });

/** v1 billing history, computed from recorded usage; v2's (v2.ts) reads the same model. */
export const billingReports = [
  report({
    version: V1,
    path: "billing/pods",
    operationId: "PodBilling",
    docs: { summary: "Pod billing history", description: "A pod bills its GPUs (or vCPUs) while RUNNING. One record per bucket and group, buckets with usage only, oldest first." },
    query: z.object({ ...windowQuery, grouping: z.enum(["podId", "gpuTypeId"]).default("gpuTypeId"), podId: z.string().optional(), gpuTypeId: z.enum(GPU_TYPE_IDS).optional() }),
    schema: z.array(BillingRecordSchema),
    run: (core, q) => core.billing.pods(q).map(iso),
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
    schema: z.array(BillingRecordSchema),
    run: (core, q) => core.billing.endpoints(q).map(iso),
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
    schema: z.array(NetworkVolumeBillingRecordSchema),
    run: (core, q) => core.billing.networkVolumes(q).map(iso),
  }),
];

export function billingRoutes(core: ViewContext, router: OpenAPIHono<AppEnv>): void {
  serveReports(core, router, TAG, [...billingV2Reports, ...billingReports]);
}
