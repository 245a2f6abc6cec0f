import { ENDPOINT_VCPU_COUNT_DEFAULT, endpointFields } from "../endpoints/index.js";
import type { EndpointSpec } from "../../domain/endpoint.js";
import type { Logger } from "../../domain/logger.js";
import type { WorkerEvent } from "../../domain/simulated-workers.js";
import { DEFAULT_DATA_CENTER_ID, DEFAULT_GPU_TYPE_ID } from "../shared/pricing.js";
import type { UsageAttrs, UsageStore } from "../shared/storage.js";

export type { UsageAttrs } from "../shared/storage.js";

/** A serverless worker alive now, as the pod listing shows it. */
export interface LiveWorker {
  workerId: string;
  endpointId: string;
  attrs: UsageAttrs;
  startedAt: number;
}

interface OpenWorker extends LiveWorker {
  rowId: number;
  seenWritten: number;
}

/** A worker's last-seen time is written at most this often (virtual ms): it is on the job path. */
const SEEN_EVERY_MS = 1000;

/**
 * Records usage on the virtual clock so billing can be computed from what happened: the life of
 * each simulated worker (from its creation, cold start included, until it is scaled down), the
 * running time of each pod and the size of each network volume over time. Everything goes to
 * SQLite, so billing survives a restart.
 */
export class UsageMeter {
  private readonly workers = new Map<string, OpenWorker>();

  constructor(
    private readonly d: {
      store: UsageStore;
      /** The endpoint's current settings (GPU type and count of new workers). */
      endpointOf: (endpointId: string) => EndpointSpec | undefined;
      log: Logger;
    },
  ) {}

  /** The WorkerPool observer. */
  readonly onWorker = (e: WorkerEvent): void => {
    try {
      if (e.type === "started") this.workerStarted(e);
      else if (e.type === "stopped") this.workerStopped(e.workerId, e.at);
      else this.workerSeen(e.workerId, e.at);
    } catch (err) {
      // Metering must never break the scheduler; a lost record is logged.
      this.d.log.error(`usage: could not record worker ${e.workerId} ${e.type}: ${(err as Error)?.message ?? String(err)}`);
    }
  };

  /** Workers alive now, oldest first. */
  liveWorkers(): LiveWorker[] {
    return [...this.workers.values()].map(({ workerId, endpointId, attrs, startedAt }) => ({ workerId, endpointId, attrs, startedAt }));
  }

  /**
   * At start: workers of a previous process are gone. Their intervals end at the last moment they
   * were seen (a clean stop recorded the exact time already).
   */
  closeOrphanWorkers(): number {
    return this.d.store.closeOpenAtSeen("worker");
  }

  /**
   * After a snapshot is restored with the clock set back to `at`: the workers the snapshot holds
   * were alive until `at` and are gone now, and nothing of theirs may reach past `at`.
   */
  restoredAt(at: number): void {
    this.workers.clear();
    this.d.store.endAllAt("worker", at);
  }

  podStarted(podId: string, attrs: UsageAttrs, at: number): void {
    if (this.d.store.openFor("pod", podId)) return;
    this.d.store.open("pod", podId, attrs, at);
  }

  podStopped(podId: string, at: number): void {
    const open = this.d.store.openFor("pod", podId);
    if (open) this.d.store.close(open.id, at);
  }

  /** A volume now has this size and type: a change closes the old interval and opens a new one. */
  volumeSized(volumeId: string, attrs: UsageAttrs, at: number): void {
    const open = this.d.store.openFor("volume", volumeId);
    if (open && open.attrs.sizeGb === attrs.sizeGb && open.attrs.volumeType === attrs.volumeType) return;
    if (open) this.d.store.close(open.id, at);
    this.d.store.open("volume", volumeId, attrs, at);
  }

  volumeDeleted(volumeId: string, at: number): void {
    const open = this.d.store.openFor("volume", volumeId);
    if (open) this.d.store.close(open.id, at);
  }

  /** Forgets all usage (reset). Live workers are reported stopped before this by the scheduler. */
  clear(): void {
    this.workers.clear();
    this.d.store.deleteAll();
  }

  private workerStarted(e: WorkerEvent): void {
    const attrs = workerAttrs(e.endpointId, this.d.endpointOf(e.endpointId));
    const rowId = this.d.store.open("worker", e.workerId, attrs, e.at);
    this.workers.set(e.workerId, { workerId: e.workerId, endpointId: e.endpointId, attrs, startedAt: e.at, rowId, seenWritten: e.at });
  }

  private workerSeen(workerId: string, at: number): void {
    const w = this.workers.get(workerId);
    if (!w || at - w.seenWritten < SEEN_EVERY_MS) return;
    this.d.store.seen(w.rowId, at);
    w.seenWritten = at;
  }

  private workerStopped(workerId: string, at: number): void {
    const w = this.workers.get(workerId);
    if (!w) return;
    this.workers.delete(workerId);
    this.d.store.close(w.rowId, at);
  }
}

/**
 * What a new worker of the endpoint bills: the first of its `gpuTypeIds` (the management fields
 * kept in `extra`), else the default GPU type; `gpuCount` GPUs (default 1). A CPU endpoint's
 * workers bill the vCPUs of the first of its CPU selections (default 2).
 */
export function workerAttrs(endpointId: string, spec: EndpointSpec | undefined): UsageAttrs {
  const extra = spec?.extra ?? {};
  const attrs: UsageAttrs = { endpointId, dataCenterId: firstString(extra.dataCenterIds) ?? DEFAULT_DATA_CENTER_ID };
  if (typeof extra.templateId === "string") attrs.templateId = extra.templateId;
  if (extra.computeType === "CPU") {
    attrs.vcpuCount = (spec && positiveInt(endpointFields(spec).cpu?.[0]?.vcpuCount)) ?? ENDPOINT_VCPU_COUNT_DEFAULT;
  } else {
    attrs.gpuTypeId = firstString(extra.gpuTypeIds) ?? DEFAULT_GPU_TYPE_ID;
    attrs.gpuCount = positiveInt(extra.gpuCount) ?? 1;
  }
  return attrs;
}

const firstString = (v: unknown): string | undefined => (Array.isArray(v) && typeof v[0] === "string" && v[0] !== "" ? v[0] : undefined);
const positiveInt = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined);
