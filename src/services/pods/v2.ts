import { z } from "@hono/zod-openapi";
import { queryOf, V2, withBody, view } from "../shared/rest.js";
import { DATA_CENTER_IDS } from "../shared/catalog/catalog.js";
import { POD_STATUSES, podActions, type Pod, type PodCreate, type PodUpdate } from "./record.js";
import { boolQuery } from "../../http/query-params.js";
import { int } from "../../http/schemas.js";
import { containerResponse, cudaVersion, MountsSchema, optionalContainerRequest, argsOf, containerFromV2, iso, persistentMount } from "../shared/container-v2.js";
import { memberIp, memberRole } from "./cluster-members.js";
import { vcpuProblem } from "../shared/catalog/cpu-catalog.js";
import { gpuType } from "../shared/catalog/gpu-catalog.js";
import { invalidBody } from "../shared/invalid.js";
import type { ViewContext } from "../shared/service.js";

/** The service's v2 pod (`/v2/pods`), request and response. */

export const POD_ACTIONS = ["start", "stop", "restart", "terminate"] as const;
const Cloud = z.enum(["SECURE", "COMMUNITY"]);

const GpuRequest = z
  .strictObject({
    id: z.string().min(1).openapi({ description: "A GPU type id (GET /v2/catalog/gpus)", example: "NVIDIA GeForce RTX 4090" }),
    count: int().min(1).optional(),
    allowedCudaVersions: z.array(cudaVersion()).optional(),
    minCudaVersion: cudaVersion().optional(),
  })
  .openapi("CreateGpuConfig");
const CpuRequest = z.strictObject({ id: z.string().min(1), vcpuCount: int().min(2) }).openapi("CreateCpuConfig");

export const CreatePodV2Schema = z
  .strictObject({
    ...optionalContainerRequest,
    name: z.string().min(1),
    cloud: Cloud.optional(),
    cpu: CpuRequest.optional(),
    dataCenterIds: z.array(z.enum(DATA_CENTER_IDS)).optional(),
    globalNetworking: z.boolean().optional(),
    gpu: GpuRequest.optional(),
    mounts: MountsSchema.optional(),
    startJupyter: z.boolean().optional(),
    startSsh: z.boolean().optional(),
    templateId: z.string().min(1).optional(),
  })
  .refine((b) => b.templateId !== undefined || b.image !== undefined, { message: "expected image, or a templateId to take it from", path: ["image"] })
  .openapi("CreatePodRequest", { description: "Exactly one of gpu and cpu. The pod is RUNNING at once" });

export const UpdatePodV2Schema = z
  .strictObject({
    ...optionalContainerRequest,
    globalNetworking: z.boolean().optional(),
    locked: z.boolean().optional(),
    mounts: MountsSchema.optional(),
    name: z.string().min(1).optional(),
    templateId: z.string().min(1).optional(),
  })
  .openapi("UpdatePodRequest", { description: "Only the fields given change; a change beyond name and locked restarts a running pod's container" });

export const PodActionV2Schema = z.strictObject({ action: z.enum(POD_ACTIONS) }).openapi("PodActionRequest");

export const ListPodsV2Query = z.object({ includeClusterPods: boolQuery().openapi({ param: { name: "includeClusterPods", in: "query" }, description: "Also the pods of clusters" }) });

const Utilization = z.object({ util: z.int() });
export const PodV2Schema = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(POD_STATUSES),
    actions: z.array(z.enum(POD_ACTIONS)),
    ...containerResponse,
    mounts: MountsSchema,
    gpu: z.object({ id: z.string(), count: z.int() }).optional(),
    cpu: z.object({ id: z.string(), vcpuCount: z.int(), memory: z.int() }).optional(),
    cloud: Cloud,
    dataCenterId: z.string().nullable(),
    cudaVersion: z.string().nullable(),
    ssh: z.object({ proxy: z.null(), direct: z.null() }).openapi({ description: "minipod runs no container: there is no SSH endpoint" }),
    cluster: z
      .object({ id: z.string(), rank: z.int().nullable(), role: z.enum(["SLURM_CONTROLLER", "SLURM_COMPUTE", "RAY_HEAD", "RAY_WORKER"]).optional(), ip: z.string().optional() })
      .optional(),
    template: z.string().nullable(),
    cost: z.number(),
    locked: z.boolean(),
    globalNetworking: z.object({ enabled: z.boolean() }),
    runtime: z
      .object({
        uptime: z.int(),
        gpus: z.array(z.object({ util: z.int(), memoryUtil: z.int() })),
        cpu: Utilization,
        memory: Utilization,
        ports: z.array(z.object({ private: z.int(), public: z.int().nullable(), type: z.string(), ip: z.string().nullable() })),
      })
      .nullable(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
  })
  .openapi("PodV2");

export type PodV2 = z.infer<typeof PodV2Schema>;
export type CreatePodV2 = z.output<typeof CreatePodV2Schema>;
export type UpdatePodV2 = z.output<typeof UpdatePodV2Schema>;

/** A pod's storage as v2 mounts: its network volume, else its persistent volume. */
function mounts(p: Pod): PodV2["mounts"] {
  if (p.networkVolumeId !== undefined) return { network: [{ volumeId: p.networkVolumeId, path: p.volumeMountPath }] };
  return persistentMount(p.volumeInGb, p.volumeMountPath);
}

/** A port as the runtime shows it: nothing is published, so no public port or IP. */
const runtimePort = (spec: string) => {
  const [port = "0", type = "tcp"] = spec.split("/");
  return { private: Number.parseInt(port, 10) || 0, public: null, type, ip: null };
};

/** A pod as v2 shows it. Nothing runs in it: utilisation is 0 and there is no SSH endpoint. */
export function toPodV2(core: Pick<ViewContext, "pods" | "clusters" | "clock">, p: Pod): PodV2 {
  const running = p.desiredStatus === "RUNNING";
  const view: PodV2 = {
    id: p.id,
    name: p.name,
    status: p.desiredStatus,
    actions: podActions(p),
    image: p.imageName,
    args: argsOf(p.dockerStartCmd),
    disk: p.containerDiskInGb,
    mounts: mounts(p),
    ports: p.ports,
    env: p.env,
    registry: p.containerRegistryAuthId ?? null,
    cloud: p.cloudType,
    dataCenterId: p.dataCenterId,
    cudaVersion: p.cudaVersion ?? null,
    ssh: { proxy: null, direct: null },
    template: p.templateId ?? null,
    cost: running ? core.pods.costPerHr(p) : 0,
    locked: p.locked,
    globalNetworking: { enabled: p.globalNetworking },
    runtime: running
      ? {
          uptime: Math.max(0, Math.floor((core.clock.now() - (p.lastStartedAt ?? p.createdAt)) / 1000)),
          gpus: Array.from({ length: p.gpuTypeId ? p.gpuCount : 0 }, () => ({ util: 0, memoryUtil: 0 })),
          cpu: { util: 0 },
          memory: { util: 0 },
          ports: p.ports.map(runtimePort),
        }
      : null,
    createdAt: iso(p.createdAt),
    startedAt: p.lastStartedAt === undefined ? null : iso(p.lastStartedAt),
  };
  if (p.gpuTypeId) view.gpu = { id: p.gpuTypeId, count: p.gpuCount };
  else view.cpu = { id: p.cpuFlavorId ?? "", vcpuCount: p.vcpuCount, memory: p.memoryInGb };
  if (p.clusterId !== undefined) {
    const rank = p.clusterRank ?? 0;
    const type = core.clusters.find(p.clusterId)?.type;
    const role = type && memberRole(type, rank);
    view.cluster = { id: p.clusterId, rank, ...(role ? { role } : {}), ip: memberIp(rank) };
  }
  return view;
}

/** A v2 create body as the model's create: one of gpu and cpu, the mount as a volume or a network volume. */
function podCreateFromV2(b: CreatePodV2): PodCreate {
  const errors: string[] = [];
  if ((b.gpu === undefined) === (b.cpu === undefined)) errors.push("$: expected exactly one of gpu and cpu");
  if (b.gpu && !gpuType(b.gpu.id)) errors.push(`$.gpu.id: unknown GPU type "${b.gpu.id}"; the ids are listed by GET /v2/catalog/gpus`);
  const cpuProblem = b.cpu && vcpuProblem(b.cpu.id, b.cpu.vcpuCount);
  if (cpuProblem) errors.push(`$.cpu: ${cpuProblem}`);
  const persistent = b.mounts?.persistent;
  const network = b.mounts?.network?.[0];
  if (persistent && network) errors.push("$.mounts: persistent and network exclude each other; attach one");
  if (persistent && b.cpu) errors.push("$.mounts.persistent: CPU pods have no persistent volume; attach a network volume instead");
  if (errors.length) throw invalidBody(errors);
  const fresh = b.templateId === undefined;
  return {
    ...containerFromV2(b),
    name: b.name,
    ports: b.ports ?? (fresh ? [] : undefined),
    containerRegistryAuthId: b.registry ?? undefined,
    cloudType: b.cloud,
    computeType: b.gpu ? "GPU" : "CPU",
    gpuTypeIds: b.gpu ? [b.gpu.id] : undefined,
    gpuCount: b.gpu?.count,
    allowedCudaVersions: b.gpu?.allowedCudaVersions,
    minCudaVersion: b.gpu?.minCudaVersion,
    cpuFlavorIds: b.cpu ? [b.cpu.id] : undefined,
    vcpuCount: b.cpu?.vcpuCount,
    volumeInGb: persistent?.size ?? (fresh || network ? 0 : undefined),
    volumeMountPath: persistent?.path ?? network?.path,
    networkVolumeId: network?.volumeId,
    dataCenterIds: b.dataCenterIds?.length ? b.dataCenterIds : undefined,
    globalNetworking: b.globalNetworking,
    startSsh: b.startSsh,
    startJupyter: b.startJupyter,
    fromTemplate: b.templateId,
  };
}

/** A v2 update body as the model's update of pod `p`; a mount keeps its kind and its volume. */
function podUpdateFromV2(b: UpdatePodV2, p: Pod): PodUpdate {
  const errors: string[] = [];
  const persistent = b.mounts?.persistent;
  const network = b.mounts?.network;
  const kind = p.networkVolumeId !== undefined ? "network" : p.volumeInGb > 0 ? "persistent" : undefined;
  if (network?.length === 0) errors.push("$.mounts.network: a network volume cannot be detached (clearing mounts is not supported)");
  if ((persistent && kind !== "persistent") || (network?.length && kind !== "network")) {
    errors.push(`$.mounts: the pod was created with ${kind ? `a ${kind} mount` : "no mount"}; the kind of mount is fixed at creation`);
  }
  if (network?.[0] && p.networkVolumeId !== undefined && network[0].volumeId !== p.networkVolumeId) {
    errors.push(`$.mounts.network[0].volumeId: the pod's network volume is ${p.networkVolumeId}; it cannot change`);
  }
  if (errors.length) throw invalidBody(errors);
  return {
    ...containerFromV2(b),
    name: b.name,
    volumeInGb: persistent?.size,
    volumeMountPath: persistent?.path ?? network?.[0]?.path,
    locked: b.locked,
    globalNetworking: b.globalNetworking,
    fromTemplate: b.templateId,
  };
}

/** `/v2/pods`: the pods of clusters listed only with includeClusterPods=true. */
export const podV2 = view<Pod, Pick<ViewContext, "pods" | "clusters" | "clock">>(V2, "pods", "Pod", PodV2Schema, (core, p) => toPodV2(core, p), {
  query: { list: ListPodsV2Query },
  list: (core, c) => core.pods.list({ excludeClusterPods: queryOf<{ includeClusterPods?: boolean }>(c).includeClusterPods !== true }),
  create: withBody(CreatePodV2Schema, (core, body) => core.pods.create(podCreateFromV2(body))),
  update: withBody(UpdatePodV2Schema, (core, body, _c, id) => core.pods.update(id, podUpdateFromV2(body, core.pods.get(id)))),
  docs: {
    list: { description: "The account's pods; the pods of clusters only with includeClusterPods=true." },
    create: {
      description:
        "The pod is RUNNING at once (nothing is provisioned) and bills from now on: one GPU type (gpu.id) or a CPU flavor (cpu). A templateId's settings apply once, under the body's; the pod keeps no link to it.",
    },
    update: { description: "Only the fields given change; a change beyond name and locked restarts a running pod's container. A mount keeps the kind it had at creation." },
    delete: { description: "The pod is gone (404 afterwards); its billing history stays." },
  },
});
