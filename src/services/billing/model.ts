import { EmulatorError } from "../../domain/errors.js";
import { BILLING_BUCKETS_MAX } from "../../domain/bounds.js";
import { BUCKET_MIN_MS, bucketEndCeil, bucketStart, forEachBucket, nextBucket, type BucketSize } from "./buckets.js";
import { BILLING_MONTH_MS, gpuHourly, type PriceList } from "../shared/pricing.js";
import type { UsageInterval, UsageKind, UsageStore } from "../shared/storage.js";

const HOUR_MS = 3_600_000;
/** Without a startTime, billing looks back this far (the real service's default). */
export const BILLING_DEFAULT_LOOKBACK_MS = 30 * 24 * HOUR_MS;

export interface BillingWindow {
  bucketSize: BucketSize;
  /** Epoch ms; default 30 days before now, snapped down to its bucket's start. */
  startTime?: number | undefined;
  /** Epoch ms, exclusive; default now, snapped up to its bucket's end. */
  endTime?: number | undefined;
}

/** A pod or serverless billing record; only the grouping field of the three ids is set. */
export interface BillingRecord {
  /** Start of the bucket, epoch ms. */
  time: number;
  /** USD, rounded to 6 decimal places. */
  amount: number;
  timeBilledMs: number;
  endpointId?: string;
  podId?: string;
  gpuTypeId?: string;
}

export interface VolumeBillingRecord {
  time: number;
  /** USD for every volume, standard and high-performance. */
  amount: number;
  /** GB billed in the bucket: each volume counted once, at its largest size in the bucket. */
  diskSpaceBilledGb: number;
  highPerformanceStorageAmount: number;
  highPerformanceStorageDiskSpaceBilledGb: number;
}

export interface PodBillingQuery extends BillingWindow {
  grouping: "podId" | "gpuTypeId";
  podId?: string | undefined;
  gpuTypeId?: string | undefined;
}

export interface EndpointBillingQuery extends BillingWindow {
  grouping: "endpointId" | "podId" | "gpuTypeId";
  endpointId?: string | undefined;
  gpuTypeId?: string[] | undefined;
  templateId?: string | undefined;
  /** Endpoints made from a template with this image. */
  imageName?: string | undefined;
  dataCenterId?: string[] | undefined;
}

interface Cell {
  ms: number;
  amount: number;
}

/** A bucket's cost of one resource (v2 billing), GPU and CPU apart. */
export interface CostRow {
  /** Start of the bucket, epoch ms. */
  time: number;
  key: string;
  gpu: number;
  cpu: number;
}

/** A bucket's storage cost of one network volume, standard and high-performance apart. */
export interface VolumeCostRow {
  time: number;
  volumeId: string;
  standard: number;
  highPerformance: number;
}

/** The last `n` buckets, the current one included: [start of the first, end of the current). */
export function lastBuckets(now: number, n: number, size: BucketSize): { startTime: number; endTime: number } {
  const current = bucketStart(now, size);
  let start = current;
  for (let i = 1; i < n && start > 0; i++) start = bucketStart(start - 1, size);
  return { startTime: start, endTime: nextBucket(current, size) };
}

/**
 * Billing history computed from the recorded usage intervals at the configured prices, bucketed in
 * UTC. Open intervals (a worker alive now, a running pod) count up to the virtual now.
 */
export class BillingService {
  constructor(
    private readonly d: {
      clock: { now(): number };
      usage: UsageStore;
      prices: PriceList;
      /** Ids of the templates whose image is `imageName`. */
      templatesWithImage: (imageName: string) => string[];
    },
  ) {}

  /** Pod running time (a pod bills while RUNNING), per pod or per GPU type. */
  pods(q: PodBillingQuery): BillingRecord[] {
    const keep = (iv: UsageInterval) => (!q.podId || iv.resourceId === q.podId) && (!q.gpuTypeId || iv.attrs.gpuTypeId === q.gpuTypeId);
    const key = (iv: UsageInterval) => (q.grouping === "podId" ? iv.resourceId : iv.attrs.gpuTypeId);
    return this.timeRecords("pod", q, keep, key, q.grouping);
  }

  /** Serverless worker time (a worker bills from its creation to its scale-down). */
  endpoints(q: EndpointBillingQuery): BillingRecord[] {
    const imageTemplates = q.imageName === undefined ? undefined : new Set(this.d.templatesWithImage(q.imageName));
    const keep = (iv: UsageInterval) =>
      (!q.endpointId || iv.attrs.endpointId === q.endpointId) &&
      (!q.gpuTypeId?.length || q.gpuTypeId.includes(iv.attrs.gpuTypeId ?? "")) &&
      (!q.templateId || iv.attrs.templateId === q.templateId) &&
      (!imageTemplates || imageTemplates.has(iv.attrs.templateId ?? "")) &&
      (!q.dataCenterId?.length || q.dataCenterId.includes(iv.attrs.dataCenterId ?? ""));
    const key = (iv: UsageInterval) => (q.grouping === "podId" ? iv.resourceId : q.grouping === "endpointId" ? iv.attrs.endpointId : iv.attrs.gpuTypeId);
    return this.timeRecords("worker", q, keep, key, q.grouping);
  }

  /** Network-volume storage, GB-hours at the per-GB-month price of each volume's type. */
  networkVolumes(q: BillingWindow): VolumeBillingRecord[] {
    const { from, until } = this.window(q);
    const { prices } = this.d;
    const buckets = new Map<number, { amount: number; hpAmount: number; gb: Map<string, number>; hpGb: Map<string, number> }>();
    for (const iv of this.d.usage.overlapping("volume", from, until)) {
      const size = iv.attrs.sizeGb ?? 0;
      const hp = iv.attrs.volumeType === "HIGH_PERFORMANCE";
      const perGbMs = (hp ? prices.highPerformanceVolumePerGbMonth : prices.volumePerGbMonth) / BILLING_MONTH_MS;
      forEachBucket(Math.max(iv.startedAt, from), Math.min(iv.stoppedAt ?? until, until), q.bucketSize, (bucket, ms) => {
        let b = buckets.get(bucket);
        if (!b) buckets.set(bucket, (b = { amount: 0, hpAmount: 0, gb: new Map(), hpGb: new Map() }));
        const amount = size * ms * perGbMs;
        b.amount += amount;
        const gb = hp ? b.hpGb : b.gb;
        gb.set(iv.resourceId, Math.max(gb.get(iv.resourceId) ?? 0, size));
        if (hp) b.hpAmount += amount;
      });
    }
    const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
    return [...buckets.entries()]
      .sort(([a], [b]) => a - b)
      .map(([time, b]) => ({
        time,
        amount: usd(b.amount),
        diskSpaceBilledGb: sum(b.gb) + sum(b.hpGb),
        highPerformanceStorageAmount: usd(b.hpAmount),
        highPerformanceStorageDiskSpaceBilledGb: sum(b.hpGb),
      }));
  }

  /**
   * Cost by bucket and by the key `keyOf` gives each interval of a kind (none: left out), GPU and
   * CPU apart, unrounded: what the v2 records and their totals are made of.
   */
  costs(kind: UsageKind, q: BillingWindow, keyOf: (iv: UsageInterval) => string | undefined): CostRow[] {
    const { from, until } = this.window(q);
    const rows = new Map<string, CostRow>();
    for (const iv of this.d.usage.overlapping(kind, from, until)) {
      const key = keyOf(iv);
      if (key === undefined) continue;
      const perMs = this.hourly(iv) / HOUR_MS;
      const gpu = iv.attrs.gpuTypeId !== undefined;
      forEachBucket(Math.max(iv.startedAt, from), Math.min(iv.stoppedAt ?? until, until), q.bucketSize, (time, ms) => {
        const id = `${time}\u0000${key}`;
        let row = rows.get(id);
        if (!row) rows.set(id, (row = { time, key, gpu: 0, cpu: 0 }));
        if (gpu) row.gpu += ms * perMs;
        else row.cpu += ms * perMs;
      });
    }
    return sortRows([...rows.values()]);
  }

  /** Storage cost by bucket and by volume, standard and high-performance apart. */
  volumeCosts(q: BillingWindow): VolumeCostRow[] {
    const { from, until } = this.window(q);
    const { prices } = this.d;
    const rows = new Map<string, VolumeCostRow>();
    for (const iv of this.d.usage.overlapping("volume", from, until)) {
      const hp = iv.attrs.volumeType === "HIGH_PERFORMANCE";
      const perGbMs = (hp ? prices.highPerformanceVolumePerGbMonth : prices.volumePerGbMonth) / BILLING_MONTH_MS;
      forEachBucket(Math.max(iv.startedAt, from), Math.min(iv.stoppedAt ?? until, until), q.bucketSize, (time, ms) => {
        const id = `${time}\u0000${iv.resourceId}`;
        let row = rows.get(id);
        if (!row) rows.set(id, (row = { time, volumeId: iv.resourceId, standard: 0, highPerformance: 0 }));
        const amount = (iv.attrs.sizeGb ?? 0) * ms * perGbMs;
        if (hp) row.highPerformance += amount;
        else row.standard += amount;
      });
    }
    return [...rows.values()].sort((a, b) => a.time - b.time || a.volumeId.localeCompare(b.volumeId));
  }

  /** The window [from, to) snapped to buckets; usage is counted until min(to, now). */
  window(q: BillingWindow): { from: number; to: number; until: number } {
    const now = this.d.clock.now();
    const end = q.endTime ?? now;
    const start = q.startTime ?? end - BILLING_DEFAULT_LOOKBACK_MS;
    if (start >= end) {
      const errors = ["query.endTime: expected a time after startTime"];
      throw new EmulatorError("VALIDATION_FAILED", `the request query parameters are invalid: ${errors.join("; ")}`, { errors });
    }
    const from = bucketStart(start, q.bucketSize);
    const to = bucketEndCeil(end, q.bucketSize);
    const buckets = Math.ceil((to - from) / BUCKET_MIN_MS[q.bucketSize]);
    if (buckets > BILLING_BUCKETS_MAX) {
      const errors = [`query.startTime: the window to endTime spans about ${buckets} ${q.bucketSize} buckets, more than ${BILLING_BUCKETS_MAX}; narrow it or choose a larger bucketSize`];
      throw new EmulatorError("VALIDATION_FAILED", `the request query parameters are invalid: ${errors.join("; ")}`, { errors });
    }
    return { from, to, until: Math.min(to, now) };
  }

  private timeRecords(
    kind: UsageKind,
    q: BillingWindow,
    keep: (iv: UsageInterval) => boolean,
    key: (iv: UsageInterval) => string | undefined,
    field: "endpointId" | "podId" | "gpuTypeId",
  ): BillingRecord[] {
    const { from, until } = this.window(q);
    const cells = new Map<number, Map<string | undefined, Cell>>();
    for (const iv of this.d.usage.overlapping(kind, from, until)) {
      if (!keep(iv)) continue;
      const perMs = this.hourly(iv) / HOUR_MS;
      const k = key(iv);
      forEachBucket(Math.max(iv.startedAt, from), Math.min(iv.stoppedAt ?? until, until), q.bucketSize, (bucket, ms) => {
        let row = cells.get(bucket);
        if (!row) cells.set(bucket, (row = new Map()));
        const cell = row.get(k) ?? { ms: 0, amount: 0 };
        cell.ms += ms;
        cell.amount += ms * perMs;
        row.set(k, cell);
      });
    }
    const out: BillingRecord[] = [];
    for (const [time, row] of [...cells.entries()].sort(([a], [b]) => a - b)) {
      for (const [k, cell] of [...row.entries()].sort(([a], [b]) => (a ?? "").localeCompare(b ?? ""))) {
        const rec: BillingRecord = { time, amount: usd(cell.amount), timeBilledMs: cell.ms };
        if (k !== undefined) rec[field] = k;
        out.push(rec);
      }
    }
    return out;
  }

  /** USD per hour of an interval: its GPUs at their type's price, or its vCPUs. */
  private hourly(iv: UsageInterval): number {
    const { prices } = this.d;
    if (iv.attrs.gpuTypeId) return gpuHourly(prices, iv.attrs.gpuTypeId) * (iv.attrs.gpuCount ?? 1);
    return prices.cpuPerVcpuHour * (iv.attrs.vcpuCount ?? 0);
  }
}

/** Rounds to micro-dollars, which also hides floating-point noise. */
export const usd = (x: number): number => Math.round(x * 1e6) / 1e6;

const sortRows = (rows: CostRow[]): CostRow[] => rows.sort((a, b) => a.time - b.time || a.key.localeCompare(b.key));
