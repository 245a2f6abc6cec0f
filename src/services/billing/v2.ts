import { z } from "@hono/zod-openapi";
import { EmulatorError } from "../../domain/errors.js";
import { lastBuckets, usd, type BillingWindow, type CostRow } from "./model.js";
import { BUCKET_SIZES, nextBucket } from "./buckets.js";
import type { UsageInterval } from "../shared/storage.js";
import type { ViewContext } from "../shared/service.js";
import { intQuery } from "../../http/schemas.js";
import { timeQuery } from "../../http/query-params.js";
import { report, V2, type ReportView } from "../shared/rest.js";
import { iso } from "../shared/container-v2.js";

/** v2 billing: time-bucketed records with the cost split by component, and a metadata block. */

const WindowQuery = {
  startTime: timeQuery().openapi({ param: { name: "startTime", in: "query" }, description: "RFC 3339; default 30 days before endTime; snapped down to its bucket" }),
  endTime: timeQuery().openapi({ param: { name: "endTime", in: "query" }, description: "RFC 3339, exclusive; default now (virtual); snapped up to its bucket's end" }),
  bucketSize: z.enum(BUCKET_SIZES).default("day").openapi({ param: { name: "bucketSize", in: "query" } }),
  lastN: intQuery().pipe(z.int().min(1)).optional().openapi({ param: { name: "lastN", in: "query" }, description: "The last N buckets, the current one included (not with startTime or endTime)" }),
};
/** What billing's reports read: its meter, and the clock (the last N buckets end now). */
export type BillingReads = Pick<ViewContext, "billing" | "clock">;

type WindowQ = { startTime?: number | undefined; endTime?: number | undefined; bucketSize: (typeof BUCKET_SIZES)[number]; lastN?: number | undefined };

/** The query's window: explicit times, or the last N buckets. */
function windowOf(core: BillingReads, q: WindowQ): BillingWindow {
  if (q.lastN === undefined) return { bucketSize: q.bucketSize, startTime: q.startTime, endTime: q.endTime };
  if (q.startTime !== undefined || q.endTime !== undefined) {
    const errors = ["query.lastN: lastN and startTime/endTime exclude each other; send one or the other"];
    throw new EmulatorError("VALIDATION_FAILED", `the request query parameters are invalid: ${errors.join("; ")}`, { errors });
  }
  return { bucketSize: q.bucketSize, ...lastBuckets(core.clock.now(), q.lastN, q.bucketSize) };
}

const range = (w: BillingWindow, time: number) => ({ startTime: iso(time), endTime: iso(nextBucket(time, w.bucketSize)) });
const resolved = (core: BillingReads, w: BillingWindow) => {
  const { from, to } = core.billing.window(w);
  return { startTime: iso(from), endTime: iso(to), bucketSize: w.bucketSize };
};
const sum = <T>(rows: T[], f: (r: T) => number) => usd(rows.reduce((a, r) => a + f(r), 0));
const amount = z.number();

/** Per-resource time records (pods, serverless, clusters): amounts by component, a total, the resource's id. */
function timeReport(o: {
  path: string;
  operationId: string;
  idName: "podId" | "serverlessId" | "clusterId";
  kind: "pod" | "worker";
  keyOf: (iv: UsageInterval) => string | undefined;
  cpu: boolean;
  summary: string;
  description: string;
  unique: "uniquePodCount" | "uniqueServerlessCount" | "uniqueClusterCount";
  extra: Record<string, number>;
}): ReportView<BillingReads> {
  const record = (r: CostRow) => ({ gpuAmount: usd(r.gpu), ...(o.cpu ? { cpuAmount: usd(r.cpu) } : {}), ...o.extra, totalAmount: usd(r.gpu + r.cpu) });
  return report({
    version: V2,
    path: o.path,
    operationId: o.operationId,
    docs: { summary: o.summary, description: o.description },
    query: z.object({ ...WindowQuery, [o.idName]: z.string().min(1).optional().openapi({ param: { name: o.idName, in: "query" } }) }),
    schema: z.object({ records: z.array(z.record(z.string(), z.unknown())), metadata: z.record(z.string(), z.unknown()) }),
    run: (core: BillingReads, q) => {
      const w = windowOf(core, q as WindowQ);
      const only = (q as unknown as Record<string, string | undefined>)[o.idName];
      const rows = core.billing.costs(o.kind, w, (iv) => {
        const key = o.keyOf(iv);
        return only !== undefined && key !== only ? undefined : key;
      });
      const records = rows.map((r) => ({ ...range(w, r.time), [o.idName]: r.key, ...record(r) }));
      const totals = { totalAmount: sum(records, (r) => r.totalAmount), gpuAmount: sum(records, (r) => r.gpuAmount), ...(o.cpu ? { cpuAmount: sum(rows, (r) => usd(r.cpu)) } : {}), ...o.extra };
      return { records, metadata: { query: { ...resolved(core, w), [o.idName]: only ?? null }, recordCount: records.length, [o.unique]: new Set(rows.map((r) => r.key)).size, totals } };
    },
  });
}

const storage = (core: Pick<ViewContext, "billing">, w: BillingWindow, only?: string) => core.billing.volumeCosts(w).filter((r) => only === undefined || r.volumeId === only);

export const billingV2Reports: ReportView<BillingReads>[] = [
  timeReport({
    path: "billing/pods",
    operationId: "listPodBilling",
    idName: "podId",
    kind: "pod",
    keyOf: (iv) => (iv.attrs.clusterId ? undefined : iv.resourceId),
    cpu: true,
    summary: "Pod billing",
    description: "A pod bills its GPUs (or vCPUs) while RUNNING; one record per pod and bucket with usage. Disks are not billed (diskAmount 0); the pods of clusters bill as their cluster.",
    unique: "uniquePodCount",
    extra: { diskAmount: 0 },
  }),
  timeReport({
    path: "billing/serverless",
    operationId: "listServerlessBilling",
    idName: "serverlessId",
    kind: "worker",
    keyOf: (iv) => iv.attrs.endpointId,
    cpu: true,
    summary: "Serverless billing",
    description: "A worker bills from its creation (cold start included) until it is scaled down; one record per endpoint and bucket with usage. No disk or platform fee here (0).",
    unique: "uniqueServerlessCount",
    extra: { diskAmount: 0, feeAmount: 0 },
  }),
  timeReport({
    path: "billing/clusters",
    operationId: "listClusterBilling",
    idName: "clusterId",
    kind: "pod",
    keyOf: (iv) => iv.attrs.clusterId,
    cpu: false,
    summary: "Cluster billing",
    description: "A cluster bills the GPUs of its pods while they run; one record per cluster and bucket with usage. No disk or networking cost here (0).",
    unique: "uniqueClusterCount",
    extra: { diskAmount: 0, networkingAmount: 0 },
  }),
  report({
    version: V2,
    path: "billing/network-volumes",
    operationId: "listNetworkVolumeBilling",
    docs: { summary: "Network volume billing", description: "GB-hours of each volume at the per-GB-month price of its type (a month is 30 days); one record per volume and bucket." },
    query: z.object({ ...WindowQuery, networkVolumeId: z.string().min(1).optional().openapi({ param: { name: "networkVolumeId", in: "query" } }) }),
    schema: z.object({ records: z.array(z.record(z.string(), z.unknown())), metadata: z.record(z.string(), z.unknown()) }),
    run: (core: BillingReads, q) => {
      const w = windowOf(core, q);
      const rows = storage(core, w, q.networkVolumeId);
      const records = rows.map((r) => ({
        ...range(w, r.time),
        networkVolumeId: r.volumeId,
        standardAmount: usd(r.standard),
        highPerformanceAmount: usd(r.highPerformance),
        totalAmount: usd(r.standard + r.highPerformance),
      }));
      const totals = { totalAmount: sum(records, (r) => r.totalAmount), standardAmount: sum(records, (r) => r.standardAmount), highPerformanceAmount: sum(records, (r) => r.highPerformanceAmount) };
      return {
        records,
        metadata: {
          query: { ...resolved(core, w), networkVolumeId: q.networkVolumeId ?? null },
          recordCount: records.length,
          uniqueNetworkVolumeCount: new Set(rows.map((r) => r.volumeId)).size,
          totals,
        },
      };
    },
  }),
  report({
    version: V2,
    path: "billing/endpoints",
    operationId: "listEndpointBilling",
    docs: { summary: "Public endpoint billing (none here)", description: "minipod has no public endpoints: there are no records." },
    query: z.object(WindowQuery),
    schema: z.object({ records: z.array(z.object({ startTime: z.string(), endTime: z.string(), totalAmount: amount })), metadata: z.record(z.string(), z.unknown()) }),
    run: (core: BillingReads, q) => {
      const w = windowOf(core, q);
      return { records: [], metadata: { query: resolved(core, w), recordCount: 0, totals: { totalAmount: 0 } } };
    },
  }),
  report({
    version: V2,
    path: "billing",
    operationId: "listBilling",
    docs: { summary: "Billing across everything", description: "One record per bucket with usage: pods, serverless, storage and clusters, each component apart, and their total." },
    query: z.object(WindowQuery),
    schema: z.object({ records: z.array(z.record(z.string(), z.unknown())), metadata: z.record(z.string(), z.unknown()) }),
    run: (core: BillingReads, q) => {
      const w = windowOf(core, q);
      const buckets = new Map<number, Record<string, number>>();
      const add = (time: number, field: string, x: number) => {
        let b = buckets.get(time);
        if (!b) buckets.set(time, (b = { ...ZERO }));
        b[field] = (b[field] ?? 0) + x;
      };
      for (const r of core.billing.costs("pod", w, (iv) => (iv.attrs.clusterId ? undefined : iv.resourceId))) {
        add(r.time, "podGpuAmount", r.gpu);
        add(r.time, "podCpuAmount", r.cpu);
      }
      for (const r of core.billing.costs("worker", w, (iv) => iv.attrs.endpointId)) {
        add(r.time, "serverlessGpuAmount", r.gpu);
        add(r.time, "serverlessCpuAmount", r.cpu);
      }
      for (const r of core.billing.costs("pod", w, (iv) => iv.attrs.clusterId)) add(r.time, "clusterGpuAmount", r.gpu);
      for (const r of storage(core, w)) {
        add(r.time, "storageStandardAmount", r.standard);
        add(r.time, "storageHighPerformanceAmount", r.highPerformance);
      }
      const records = [...buckets.entries()]
        .sort(([a], [b]) => a - b)
        .map(([time, b]) => {
          const amounts = Object.fromEntries(Object.entries(b).map(([k, v]) => [k, usd(v)]));
          return { ...range(w, time), ...amounts, totalAmount: usd(Object.values(b).reduce((x, y) => x + y, 0)) };
        });
      const totals = Object.fromEntries(["totalAmount", ...Object.keys(ZERO)].map((k) => [k, sum(records, (r) => (r as Record<string, unknown>)[k] as number)]));
      return { records, metadata: { query: resolved(core, w), recordCount: records.length, totals } };
    },
  }),
];

/** Every component of a v2 aggregate record, at zero. */
const ZERO: Record<string, number> = {
  podGpuAmount: 0,
  podCpuAmount: 0,
  podDiskAmount: 0,
  serverlessGpuAmount: 0,
  serverlessCpuAmount: 0,
  serverlessDiskAmount: 0,
  serverlessFeeAmount: 0,
  storageStandardAmount: 0,
  storageHighPerformanceAmount: 0,
  endpointAmount: 0,
  clusterGpuAmount: 0,
  clusterDiskAmount: 0,
  clusterNetworkingAmount: 0,
};
