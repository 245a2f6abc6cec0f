/** A pod of the management surface: a rented machine that runs one container. */
import type { Template } from "../templates/index.js";

export const POD_STATUSES = ["RUNNING", "EXITED", "TERMINATED"] as const;
export type PodStatus = (typeof POD_STATUSES)[number];

/** CPU flavors a CPU pod may ask for (v1 PodCreateInput.cpuFlavorIds). */
export const POD_CPU_FLAVOR_IDS = ["cpu3c", "cpu3g", "cpu3m", "cpu5c", "cpu5g", "cpu5m"] as const;

export interface Pod {
  id: string;
  name: string;
  imageName: string;
  templateId: string | undefined;
  computeType: "GPU" | "CPU";
  cloudType: "SECURE" | "COMMUNITY";
  /** GPU pods: the GPU type rented (the first of `gpuTypeIds`). */
  gpuTypeId: string | undefined;
  gpuCount: number;
  /** CPU pods: the CPU flavor rented (the first of `cpuFlavorIds`). */
  cpuFlavorId: string | undefined;
  vcpuCount: number;
  memoryInGb: number;
  containerDiskInGb: number;
  volumeInGb: number;
  volumeMountPath: string;
  networkVolumeId: string | undefined;
  containerRegistryAuthId: string | undefined;
  dataCenterId: string;
  env: Record<string, string>;
  ports: string[];
  dockerEntrypoint: string[];
  dockerStartCmd: string[];
  interruptible: boolean;
  locked: boolean;
  globalNetworking: boolean;
  machineId: string;
  /** GPU pods: the CUDA version of the machine (from the pod's CUDA constraints); CPU pods: none. */
  cudaVersion?: string | undefined;
  /** A cluster's member: the cluster, and the pod's rank in it (0 is the primary). */
  clusterId?: string | undefined;
  clusterRank?: number | undefined;
  /** Serverless workers shown as pods: their endpoint. Never set on a stored pod. */
  endpointId: string | undefined;
  desiredStatus: PodStatus;
  /** Virtual time the pod last started (created, started, reset or restarted). */
  lastStartedAt: number | undefined;
  /** The last lifecycle event, as the service words it: "Rented by User: <date>". */
  lastStatusChange: string;
  createdAt: number;
}

/** The create body (v1 PodCreateInput), as validated. */
export interface PodCreate {
  name?: string | undefined;
  imageName?: string | undefined;
  templateId?: string | undefined;
  computeType?: "GPU" | "CPU" | undefined;
  cloudType?: "SECURE" | "COMMUNITY" | undefined;
  gpuTypeIds?: string[] | undefined;
  gpuCount?: number | undefined;
  cpuFlavorIds?: string[] | undefined;
  vcpuCount?: number | undefined;
  minRAMPerGPU?: number | undefined;
  minVCPUPerGPU?: number | undefined;
  containerDiskInGb?: number | null | undefined;
  volumeInGb?: number | null | undefined;
  volumeMountPath?: string | undefined;
  networkVolumeId?: string | undefined;
  containerRegistryAuthId?: string | undefined;
  dataCenterIds?: string[] | undefined;
  env?: Record<string, string> | undefined;
  ports?: string[] | undefined;
  dockerEntrypoint?: string[] | undefined;
  dockerStartCmd?: string[] | undefined;
  interruptible?: boolean | undefined;
  locked?: boolean | undefined;
  globalNetworking?: boolean | undefined;
  /** Acceptable CUDA versions of the machine; it gets the first one some machine has. */
  allowedCudaVersions?: string[] | undefined;
  /** Lowest CUDA version of the machine (v2); exclusive with a non-empty allowedCudaVersions. */
  minCudaVersion?: string | undefined;
  /** Add `PUBLIC_KEY` (the account's SSH keys) to the env, unless it is set. */
  startSsh?: boolean | undefined;
  /** Add a generated `JUPYTER_PASSWORD` to the env, unless it is set. */
  startJupyter?: boolean | undefined;
  /**
   * v2: a pod template whose settings apply first, once (fields given win; env merges per key); the
   * pod keeps no link to it. v1's `templateId` instead makes the pod the template's.
   */
  fromTemplate?: string | undefined;
}

/** The update body (v1 PodUpdateInput): fields other than `name` and `locked` reset the pod. */
export interface PodUpdate {
  name?: string | undefined;
  imageName?: string | undefined;
  containerDiskInGb?: number | null | undefined;
  volumeInGb?: number | null | undefined;
  volumeMountPath?: string | undefined;
  /** null: no registry credential. */
  containerRegistryAuthId?: string | null | undefined;
  env?: Record<string, string> | undefined;
  ports?: string[] | undefined;
  dockerEntrypoint?: string[] | undefined;
  dockerStartCmd?: string[] | undefined;
  locked?: boolean | undefined;
  globalNetworking?: boolean | undefined;
  /** v2: a pod template whose container settings apply first, once (fields given win; env merges per key). */
  fromTemplate?: string | undefined;
}

/** Fields an update changes without restarting the container (v1 PodUpdateInPlaceInput). */
export const IN_PLACE_FIELDS: ReadonlySet<string> = new Set(["name", "locked"]);

/** v1 create defaults. */
export const POD_DEFAULTS = {
  name: "my pod",
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: "/workspace",
  ports: ["8888/http", "22/tcp"],
  gpuCount: 1,
  minRAMPerGPU: 8,
  minVCPUPerGPU: 2,
  cpuVcpuCount: 2,
  cpuFlavorId: "cpu3c",
} as const;

export type PodEvent = "Rented" | "Started" | "Stopped" | "Reset" | "Restarted";

/** What may be done to a pod in its status (the v2 `actions`): a running pod stops or restarts, a stopped one starts. */
export function podActions(pod: Pick<Pod, "desiredStatus">): Array<"start" | "stop" | "restart" | "terminate"> {
  if (pod.desiredStatus === "RUNNING") return ["stop", "restart", "terminate"];
  if (pod.desiredStatus === "EXITED") return ["start", "terminate"];
  return [];
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (n: number) => String(n).padStart(2, "0");

/**
 * `lastStatusChange` as the service writes it ("Rented by User: Fri Jul 12 2024 19:14:40
 * GMT+0000 (Coordinated Universal Time)"), always in UTC so it does not depend on the host.
 */
export function statusChange(event: PodEvent, at: number): string {
  const d = new Date(at);
  const date = `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${two(d.getUTCDate())} ${d.getUTCFullYear()}`;
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  return `${event} by User: ${date} ${time} GMT+0000 (Coordinated Universal Time)`;
}

/** Other resources a pod refers to, looked up where they live. */
export interface PodRefs {
  template(id: string): Template | undefined;
  networkVolume(id: string): { dataCenterId: string } | undefined;
  registryAuthExists(id: string): boolean;
  endpointName(id: string): string | undefined;
  /** The account's SSH public keys, for pods started with `startSsh`. */
  sshKeys(): readonly string[];
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
  /** Leave out the pods of clusters (v2 lists them only when asked). */
  excludeClusterPods?: boolean | undefined;
}

/** For seeding from the config: a fixed id and an initial status. */
export interface PodSeed {
  id: string;
  desiredStatus: "RUNNING" | "EXITED";
}
