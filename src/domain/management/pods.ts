import { EmulatorError } from "../errors.js";
import { newResourceId } from "../ids.js";
import { invalidBody, notFound } from "./invalid.js";
import { IN_PLACE_FIELDS, POD_DEFAULTS, statusChange, type Pod, type PodCreate, type PodEvent, type PodStatus, type PodUpdate } from "./pod.js";
import { DEFAULT_DATA_CENTER_ID, DEFAULT_GPU_TYPE_ID, gpuHourly, type PriceList } from "./pricing.js";
import type { LiveWorker, UsageAttrs } from "./usage.js";
import { workerPod } from "./worker-pods.js";

export interface PodStore {
  list(): Pod[];
  get(id: string): Pod | undefined;
  /** Inserts or replaces the whole pod. */
  save(pod: Pod): void;
  delete(id: string): boolean;
  deleteAll(): void;
}

/** Other resources a pod refers to, looked up where they live. */
export interface PodRefs {
  template(id: string): { imageName?: string | undefined } | undefined;
  networkVolume(id: string): { dataCenterId: string } | undefined;
  registryAuthExists(id: string): boolean;
  endpointName(id: string): string | undefined;
}

export interface PodFilter {
  computeType?: "GPU" | "CPU" | undefined;
  cpuFlavorId?: string[] | undefined;
  dataCenterId?: string[] | undefined;
  desiredStatus?: PodStatus | undefined;
  endpointId?: string | undefined;
  gpuTypeId?: string[] | undefined;
  id?: string | undefined;
  imageName?: string | undefined;
  name?: string | undefined;
  networkVolumeId?: string | undefined;
  templateId?: string | undefined;
  /** Also list the serverless workers, as pods. */
  includeWorkers?: boolean | undefined;
}

/** For seeding from the config: a fixed id and an initial status. */
export interface PodSeed {
  id: string;
  desiredStatus: "RUNNING" | "EXITED";
}

/**
 * Pods of the management surface (`/v1/pods`): CRUD and the lifecycle actions. A pod bills while
 * RUNNING; every start and stop is recorded on the virtual clock for billing.
 */
export class PodService {
  constructor(
    private readonly d: {
      clock: { now(): number };
      store: PodStore;
      refs: PodRefs;
      prices: PriceList;
      usage: { podStarted(id: string, attrs: UsageAttrs, at: number): void; podStopped(id: string, at: number): void };
      liveWorkers: () => LiveWorker[];
    },
  ) {}

  list(f: PodFilter = {}): Pod[] {
    const all = f.includeWorkers ? [...this.d.store.list(), ...this.workerPods()] : this.d.store.list();
    return all.filter(
      (p) =>
        (!f.computeType || p.computeType === f.computeType) &&
        (!f.cpuFlavorId?.length || f.cpuFlavorId.includes(p.cpuFlavorId ?? "")) &&
        (!f.dataCenterId?.length || f.dataCenterId.includes(p.dataCenterId)) &&
        (!f.desiredStatus || p.desiredStatus === f.desiredStatus) &&
        (!f.endpointId || p.endpointId === f.endpointId) &&
        (!f.gpuTypeId?.length || f.gpuTypeId.includes(p.gpuTypeId ?? "")) &&
        (!f.id || p.id === f.id) &&
        (!f.imageName || p.imageName === f.imageName) &&
        (!f.name || p.name === f.name) &&
        (!f.networkVolumeId || p.networkVolumeId === f.networkVolumeId) &&
        (!f.templateId || p.templateId === f.templateId),
    );
  }

  /** A pod; a serverless worker too when `includeWorkers`. */
  get(id: string, includeWorkers = false): Pod {
    const pod = this.d.store.get(id) ?? (includeWorkers ? this.workerPods().find((w) => w.id === id) : undefined);
    if (!pod) throw notFound("pod", id);
    return pod;
  }

  exists(id: string): boolean {
    return this.d.store.get(id) !== undefined;
  }

  create(input: PodCreate, seed?: PodSeed): Pod {
    const now = this.d.clock.now();
    const errors: string[] = [];
    const template = input.templateId === undefined ? undefined : this.d.refs.template(input.templateId);
    if (input.templateId !== undefined && !template) errors.push(`$.templateId: template "${input.templateId}" not found`);
    const imageName = input.imageName ?? template?.imageName;
    if (!imageName && input.templateId === undefined) errors.push("$: expected imageName or templateId");
    const dataCenterId = this.placement(input, errors);
    this.checkRegistryAuth(input.containerRegistryAuthId, errors);
    if (errors.length) throw invalidBody(errors);

    const gpu = (input.computeType ?? "GPU") === "GPU";
    const gpuCount = gpu ? (input.gpuCount ?? POD_DEFAULTS.gpuCount) : 0;
    const vcpuCount = gpu ? (input.minVCPUPerGPU ?? POD_DEFAULTS.minVCPUPerGPU) * gpuCount : (input.vcpuCount ?? POD_DEFAULTS.cpuVcpuCount);
    const pod: Pod = {
      id: seed?.id ?? newResourceId(),
      name: input.name ?? POD_DEFAULTS.name,
      imageName: imageName ?? "",
      templateId: input.templateId,
      computeType: gpu ? "GPU" : "CPU",
      cloudType: input.cloudType ?? "SECURE",
      gpuTypeId: gpu ? (input.gpuTypeIds?.[0] ?? DEFAULT_GPU_TYPE_ID) : undefined,
      gpuCount,
      cpuFlavorId: gpu ? undefined : (input.cpuFlavorIds?.[0] ?? POD_DEFAULTS.cpuFlavorId),
      vcpuCount,
      memoryInGb: gpu ? (input.minRAMPerGPU ?? POD_DEFAULTS.minRAMPerGPU) * gpuCount : vcpuCount * POD_DEFAULTS.cpuRamPerVcpu,
      containerDiskInGb: input.containerDiskInGb ?? POD_DEFAULTS.containerDiskInGb,
      volumeInGb: input.volumeInGb ?? POD_DEFAULTS.volumeInGb,
      volumeMountPath: input.volumeMountPath ?? POD_DEFAULTS.volumeMountPath,
      networkVolumeId: input.networkVolumeId,
      containerRegistryAuthId: input.containerRegistryAuthId,
      dataCenterId,
      env: input.env ?? {},
      ports: input.ports ?? [...POD_DEFAULTS.ports],
      dockerEntrypoint: input.dockerEntrypoint ?? [],
      dockerStartCmd: input.dockerStartCmd ?? [],
      interruptible: input.interruptible ?? false,
      locked: input.locked ?? false,
      globalNetworking: input.globalNetworking ?? false,
      machineId: newResourceId(),
      endpointId: undefined,
      desiredStatus: "RUNNING",
      lastStartedAt: now,
      lastStatusChange: statusChange("Rented", now),
      createdAt: now,
    };
    if (seed?.desiredStatus === "EXITED") Object.assign(pod, { desiredStatus: "EXITED", lastStartedAt: undefined });
    this.d.store.save(pod);
    if (pod.desiredStatus === "RUNNING") this.d.usage.podStarted(pod.id, this.attrs(pod), now);
    return pod;
  }

  /** Applies an update; a change beyond `name` and `locked` resets a running pod. */
  update(id: string, patch: PodUpdate): Pod {
    const pod = this.require(id);
    const errors: string[] = [];
    const fields = Object.keys(patch).filter((k) => patch[k as keyof PodUpdate] !== undefined);
    if (fields.length === 0) errors.push("$: expected at least one field to update");
    this.checkRegistryAuth(patch.containerRegistryAuthId, errors);
    if (errors.length) throw invalidBody(errors);
    const next: Pod = { ...pod };
    for (const k of fields) {
      const v = patch[k as keyof PodUpdate];
      // A null disk size asks for the default, as on create.
      (next as unknown as Record<string, unknown>)[k] = v === null ? POD_DEFAULTS[k as "containerDiskInGb" | "volumeInGb"] : v;
    }
    const resets = fields.some((k) => !IN_PLACE_FIELDS.has(k)) && pod.desiredStatus === "RUNNING";
    if (resets) this.mark(next, "Reset");
    this.d.store.save(next);
    return next;
  }

  delete(id: string): void {
    const pod = this.require(id);
    this.d.usage.podStopped(pod.id, this.d.clock.now());
    this.d.store.delete(id);
  }

  /** Starts or resumes a pod; a running pod is left as it is. */
  start(id: string): Pod {
    const pod = this.require(id);
    if (pod.desiredStatus === "RUNNING") return pod;
    return this.transition(pod, "RUNNING", "Started");
  }

  /** Stops a pod (EXITED); a stopped pod is left as it is. Refused while the pod is locked. */
  stop(id: string): Pod {
    const pod = this.require(id);
    if (pod.desiredStatus === "EXITED") return pod;
    this.refuseLocked(pod, "stopped");
    return this.transition(pod, "EXITED", "Stopped");
  }

  /** Restarts a running pod's container. */
  restart(id: string): Pod {
    const pod = this.require(id);
    this.refuseLocked(pod, "restarted");
    if (pod.desiredStatus !== "RUNNING") throw new EmulatorError("INVALID_STATE", `pod "${id}" is ${pod.desiredStatus}, not RUNNING; start it instead`);
    return this.transition(pod, "RUNNING", "Restarted");
  }

  /** Resets a pod: its container starts again from a clean container disk, RUNNING. */
  reset(id: string): Pod {
    const pod = this.require(id);
    this.refuseLocked(pod, "reset");
    return this.transition(pod, "RUNNING", "Reset");
  }

  /** USD per hour of the pod while it runs, at the configured prices. */
  costPerHr(pod: Pod): number {
    const perHour = pod.gpuTypeId ? gpuHourly(this.d.prices, pod.gpuTypeId) * pod.gpuCount : this.d.prices.cpuPerVcpuHour * pod.vcpuCount;
    return Math.round(perHour * 1e6) / 1e6;
  }

  /** The pod using the registry auth, if any, for refusing its deletion. */
  usingRegistryAuth(authId: string): string | undefined {
    const pod = this.d.store.list().find((p) => p.containerRegistryAuthId === authId);
    return pod ? `pod "${pod.id}"` : undefined;
  }

  /** Removes every pod (reset); their running time is closed first. */
  deleteAll(): void {
    const now = this.d.clock.now();
    for (const p of this.d.store.list()) this.d.usage.podStopped(p.id, now);
    this.d.store.deleteAll();
  }

  private transition(pod: Pod, status: "RUNNING" | "EXITED", event: PodEvent): Pod {
    const now = this.d.clock.now();
    const next: Pod = { ...pod, desiredStatus: status };
    if (status === "RUNNING") this.mark(next, event);
    else next.lastStatusChange = statusChange(event, now);
    this.d.store.save(next);
    if (status === "RUNNING") this.d.usage.podStarted(pod.id, this.attrs(next), now);
    else this.d.usage.podStopped(pod.id, now);
    return next;
  }

  private mark(pod: Pod, event: PodEvent): void {
    const now = this.d.clock.now();
    pod.lastStartedAt = now;
    pod.lastStatusChange = statusChange(event, now);
  }

  private require(id: string): Pod {
    const pod = this.d.store.get(id);
    if (pod) return pod;
    const worker = this.d.liveWorkers().find((w) => w.workerId === id);
    if (worker) throw new EmulatorError("INVALID_STATE", `"${id}" is a serverless worker of endpoint "${worker.endpointId}"; manage it through the endpoint`);
    throw notFound("pod", id);
  }

  private refuseLocked(pod: Pod, what: string): void {
    if (pod.locked) throw new EmulatorError("INVALID_STATE", `pod "${pod.id}" is locked and cannot be ${what}; unlock it first (PATCH {"locked": false})`);
  }

  /** The data center: the attached network volume's, which must be among `dataCenterIds` if given. */
  private placement(input: PodCreate, errors: string[]): string {
    const wanted = input.dataCenterIds?.[0] ?? DEFAULT_DATA_CENTER_ID;
    if (input.networkVolumeId === undefined) return wanted;
    const volume = this.d.refs.networkVolume(input.networkVolumeId);
    if (!volume) {
      errors.push(`$.networkVolumeId: network volume "${input.networkVolumeId}" not found`);
      return wanted;
    }
    if (input.dataCenterIds?.length && !input.dataCenterIds.includes(volume.dataCenterId)) {
      errors.push(`$.dataCenterIds: network volume "${input.networkVolumeId}" is in ${volume.dataCenterId}, which is not listed`);
    }
    return volume.dataCenterId;
  }

  private checkRegistryAuth(id: string | undefined, errors: string[]): void {
    if (id !== undefined && !this.d.refs.registryAuthExists(id)) errors.push(`$.containerRegistryAuthId: container registry auth "${id}" not found`);
  }

  private attrs(pod: Pod): UsageAttrs {
    const a: UsageAttrs = { dataCenterId: pod.dataCenterId };
    if (pod.templateId) a.templateId = pod.templateId;
    if (pod.gpuTypeId) Object.assign(a, { gpuTypeId: pod.gpuTypeId, gpuCount: pod.gpuCount });
    else a.vcpuCount = pod.vcpuCount;
    return a;
  }

  private workerPods(): Pod[] {
    return this.d.liveWorkers().map((w) => workerPod(w, this.d.refs));
  }
}
