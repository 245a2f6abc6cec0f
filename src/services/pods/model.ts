import { EmulatorError } from "../../domain/errors.js";
import { newResourceId } from "../../domain/ids.js";
import { invalidBody, notFound } from "../shared/invalid.js";
import type { DocumentStore } from "../shared/storage.js";
import { IN_PLACE_FIELDS, POD_DEFAULTS, statusChange, type Pod, type PodCreate, type PodEvent, type PodFilter, type PodRefs, type PodSeed, type PodUpdate } from "./record.js";
import { podLog, type LogBook } from "../../domain/logbook.js";
import { cpuMemoryGb } from "../shared/catalog/cpu-catalog.js";
import { machineCuda, podTemplate, startEnv, updateWithTemplate, withTemplate } from "./pod-settings.js";
import { DEFAULT_DATA_CENTER_ID, DEFAULT_GPU_TYPE_ID, gpuHourly, type PriceList } from "../shared/pricing.js";
import type { LiveWorker, UsageAttrs } from "../billing/index.js";
import { workerPod } from "./worker-pods.js";

export type { PodFilter, PodRefs, PodSeed } from "./record.js";

/** The log line of each lifecycle event after creation. */
const EVENT_LINES: Record<PodEvent, string> = {
  Rented: "container started",
  Started: "container started",
  Stopped: "container stopped: the pod is EXITED, its GPUs released, its disk kept",
  Reset: "container reset: started again from a clean container disk",
  Restarted: "container restarted",
};

/**
 * Pods of the management surface (`/v1/pods`): CRUD and the lifecycle actions. A pod bills while
 * RUNNING; every start and stop is recorded on the virtual clock for billing.
 */
export class PodService {
  constructor(
    private readonly d: {
      clock: { now(): number };
      store: DocumentStore<Pod>;
      refs: PodRefs;
      prices: PriceList;
      usage: { podStarted(id: string, attrs: UsageAttrs, at: number): void; podStopped(id: string, at: number): void };
      liveWorkers: () => LiveWorker[];
      /** Where each pod's lifecycle is written, as its log. */
      logs?: LogBook;
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
        (!f.templateId || p.templateId === f.templateId) &&
        (!f.excludeClusterPods || p.clusterId === undefined),
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

  /** Creates a pod; `member` makes it a cluster's (see ClusterService), managed through the cluster only. */
  create(given: PodCreate, seed?: PodSeed, member?: { clusterId: string; rank: number }): Pod {
    const now = this.d.clock.now();
    const errors: string[] = [];
    const input = given.fromTemplate === undefined ? given : withTemplate(given, podTemplate(this.d.refs.template(given.fromTemplate), given.fromTemplate));
    const template = input.templateId === undefined ? undefined : this.d.refs.template(input.templateId);
    if (input.templateId !== undefined && !template) errors.push(`$.templateId: template "${input.templateId}" not found`);
    const imageName = input.imageName ?? template?.imageName;
    if (!imageName && input.templateId === undefined) errors.push("$: expected imageName or templateId");
    const dataCenterId = this.placement(input, errors);
    this.checkRegistryAuth(input.containerRegistryAuthId, errors);
    const gpu = (input.computeType ?? "GPU") === "GPU";
    const cudaVersion = gpu ? machineCuda(input.allowedCudaVersions, input.minCudaVersion, errors) : undefined;
    if (errors.length) throw invalidBody(errors);

    const gpuCount = gpu ? (input.gpuCount ?? POD_DEFAULTS.gpuCount) : 0;
    const vcpuCount = gpu ? (input.minVCPUPerGPU ?? POD_DEFAULTS.minVCPUPerGPU) * gpuCount : (input.vcpuCount ?? POD_DEFAULTS.cpuVcpuCount);
    const cpuFlavorId = gpu ? undefined : (input.cpuFlavorIds?.[0] ?? POD_DEFAULTS.cpuFlavorId);
    const pod: Pod = {
      id: seed?.id ?? newResourceId(),
      name: input.name ?? POD_DEFAULTS.name,
      imageName: imageName ?? "",
      templateId: input.templateId,
      computeType: gpu ? "GPU" : "CPU",
      cloudType: input.cloudType ?? "SECURE",
      gpuTypeId: gpu ? (input.gpuTypeIds?.[0] ?? DEFAULT_GPU_TYPE_ID) : undefined,
      gpuCount,
      cpuFlavorId,
      vcpuCount,
      memoryInGb: gpu ? (input.minRAMPerGPU ?? POD_DEFAULTS.minRAMPerGPU) * gpuCount : cpuMemoryGb(cpuFlavorId!, vcpuCount),
      containerDiskInGb: input.containerDiskInGb ?? POD_DEFAULTS.containerDiskInGb,
      volumeInGb: input.volumeInGb ?? POD_DEFAULTS.volumeInGb,
      volumeMountPath: input.volumeMountPath ?? POD_DEFAULTS.volumeMountPath,
      networkVolumeId: input.networkVolumeId,
      containerRegistryAuthId: input.containerRegistryAuthId,
      dataCenterId,
      env: startEnv(input.env ?? {}, { startSsh: input.startSsh, startJupyter: input.startJupyter, sshKeys: this.d.refs.sshKeys(), secret: newResourceId }),
      ports: input.ports ?? [...POD_DEFAULTS.ports],
      dockerEntrypoint: input.dockerEntrypoint ?? [],
      dockerStartCmd: input.dockerStartCmd ?? [],
      interruptible: input.interruptible ?? false,
      locked: input.locked ?? false,
      globalNetworking: input.globalNetworking ?? false,
      machineId: newResourceId(),
      cudaVersion,
      clusterId: member?.clusterId,
      clusterRank: member?.rank,
      endpointId: undefined,
      desiredStatus: "RUNNING",
      lastStartedAt: now,
      lastStatusChange: statusChange("Rented", now),
      createdAt: now,
    };
    if (seed?.desiredStatus === "EXITED") Object.assign(pod, { desiredStatus: "EXITED", lastStartedAt: undefined });
    this.d.store.save(pod);
    const compute = gpu ? `${gpuCount} x ${pod.gpuTypeId}` : `${vcpuCount} vCPU ${cpuFlavorId}`;
    this.note(pod, `pod created: image ${pod.imageName}, ${compute}, data center ${dataCenterId}`);
    if (pod.desiredStatus === "RUNNING") {
      this.d.usage.podStarted(pod.id, this.attrs(pod), now);
      this.note(pod, "container started (minipod runs no container: the pod is RUNNING at once)");
    }
    return pod;
  }

  /** Applies an update; a change beyond `name` and `locked` resets a running pod. */
  update(id: string, given: PodUpdate): Pod {
    const pod = this.own(id);
    const errors: string[] = [];
    const patch = given.fromTemplate === undefined ? given : updateWithTemplate(given, podTemplate(this.d.refs.template(given.fromTemplate), given.fromTemplate));
    const fields = Object.keys(patch).filter((k) => patch[k as keyof PodUpdate] !== undefined);
    if (fields.length === 0) errors.push("$: expected at least one field to update");
    this.checkRegistryAuth(patch.containerRegistryAuthId ?? undefined, errors);
    if (errors.length) throw invalidBody(errors);
    const next: Pod = { ...pod };
    for (const k of fields) {
      const v = patch[k as keyof PodUpdate];
      // A null disk size asks for the default, as on create; a null registry removes it.
      if (v === null) (next as unknown as Record<string, unknown>)[k] = k === "containerRegistryAuthId" ? undefined : POD_DEFAULTS[k as "containerDiskInGb" | "volumeInGb"];
      else (next as unknown as Record<string, unknown>)[k] = v;
    }
    const resets = fields.some((k) => !IN_PLACE_FIELDS.has(k)) && pod.desiredStatus === "RUNNING";
    if (resets) this.mark(next, "Reset");
    this.d.store.save(next);
    this.note(next, `configuration changed: ${fields.join(", ")}${resets ? "; container restarted with it" : ""}`);
    return next;
  }

  /** Terminates a pod; a cluster's only `byCluster` (deleting the cluster). */
  delete(id: string, byCluster = false): void {
    const pod = byCluster ? this.require(id) : this.own(id);
    this.d.usage.podStopped(pod.id, this.d.clock.now());
    this.d.store.delete(id);
    this.note(pod, "pod terminated: its container disk is gone");
    this.d.logs?.end(podLog(pod.id));
  }

  /** Starts or resumes a pod; a running pod is left as it is. */
  start(id: string): Pod {
    const pod = this.own(id);
    if (pod.desiredStatus === "RUNNING") return pod;
    return this.transition(pod, "RUNNING", "Started");
  }

  /** Stops a pod (EXITED); a stopped pod is left as it is. Refused while the pod is locked. */
  stop(id: string): Pod {
    const pod = this.own(id);
    if (pod.desiredStatus === "EXITED") return pod;
    this.refuseLocked(pod, "stopped");
    return this.transition(pod, "EXITED", "Stopped");
  }

  /** Restarts a running pod's container. */
  restart(id: string): Pod {
    const pod = this.own(id);
    this.refuseLocked(pod, "restarted");
    if (pod.desiredStatus !== "RUNNING") throw new EmulatorError("INVALID_STATE", `pod "${id}" is ${pod.desiredStatus}, not RUNNING; start it instead`);
    return this.transition(pod, "RUNNING", "Restarted");
  }

  /** Resets a pod: its container starts again from a clean container disk, RUNNING. */
  reset(id: string): Pod {
    const pod = this.own(id);
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

  private transition(pod: Pod, status: "RUNNING" | "EXITED", event: PodEvent): Pod {
    const now = this.d.clock.now();
    const next: Pod = { ...pod, desiredStatus: status };
    if (status === "RUNNING") this.mark(next, event);
    else next.lastStatusChange = statusChange(event, now);
    this.d.store.save(next);
    if (status === "RUNNING") this.d.usage.podStarted(pod.id, this.attrs(next), now);
    else this.d.usage.podStopped(pod.id, now);
    this.note(next, EVENT_LINES[event]);
    return next;
  }

  /** A system line in the pod's log. */
  private note(pod: Pod, line: string): void {
    this.d.logs?.append(podLog(pod.id), this.d.clock.now(), "system", line);
  }

  private mark(pod: Pod, event: PodEvent): void {
    const now = this.d.clock.now();
    pod.lastStartedAt = now;
    pod.lastStatusChange = statusChange(event, now);
  }

  /** A pod that may be managed on its own: not a cluster's (those go through their cluster). */
  private own(id: string): Pod {
    const pod = this.require(id);
    if (pod.clusterId !== undefined) {
      throw new EmulatorError("CONFLICT", `pod "${id}" belongs to cluster "${pod.clusterId}"; manage it through /v2/clusters/${pod.clusterId}`);
    }
    return pod;
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
    if (pod.clusterId) a.clusterId = pod.clusterId;
    if (pod.gpuTypeId) Object.assign(a, { gpuTypeId: pod.gpuTypeId, gpuCount: pod.gpuCount });
    else a.vcpuCount = pod.vcpuCount;
    return a;
  }

  private workerPods(): Pod[] {
    return this.d.liveWorkers().map((w) => workerPod(w, this.d.refs));
  }
}
