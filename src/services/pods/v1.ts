import { z } from "@hono/zod-openapi";
import { queryOf, V1, withBody, view } from "../shared/rest.js";
import { COMPUTE_TYPES, CUDA_VERSIONS, DATA_CENTER_IDS, GPU_TYPE_IDS } from "../shared/catalog/catalog.js";
import { POD_CPU_FLAVOR_IDS, POD_DEFAULTS, POD_STATUSES, type Pod } from "./record.js";
import { boolQuery, listQuery } from "../../http/query-params.js";
import { int } from "../../http/schemas.js";
import { EMULATOR_USER_ID } from "../shared/user.js";
import type { ViewContext } from "../shared/service.js";

export const TAG = "Pods";

const PORT = /^\d{1,5}\/(http|tcp)$/;
/** Ports as a list (`["8888/http"]`) or, like the v1 default, one comma-separated string. */
const ports = () =>
  z
    .preprocess(
      (v) => (typeof v === "string" ? v.split(",").map((s) => s.trim()).filter((s) => s !== "") : v),
      z.array(z.string().regex(PORT, "expected a port such as 8888/http or 22/tcp")),
    )
    .optional()
    .openapi({ description: 'Exposed ports, "[port]/[http|tcp]"', example: [...POD_DEFAULTS.ports] });

const disk = (what: string, def: number, min = 0) => int().min(min).nullable().optional().openapi({ description: `${what}, GB (default ${def})` });
const env = () => z.record(z.string(), z.string()).optional().openapi({ example: { ENV_VAR: "value" } });
const strings = () => z.array(z.string()).optional();
/** What the container runs with, the same in a create and an update. */
const containerRun = { env: env(), ports: ports(), dockerEntrypoint: strings(), dockerStartCmd: strings() };

/** v1 PodCreateInput. The body is open: unknown fields are ignored, as the v1 surface does. */
export const CreatePodV1Schema = z
  .object({
    name: z
      .string()
      .max(191)
      .optional()
      .openapi({ description: `Default "${POD_DEFAULTS.name}"`, example: "my pod" }),
    imageName: z
      .string()
      .min(1)
      .optional()
      .openapi({ description: "Shown as the pod's image; nothing is pulled. Required unless templateId is set", example: "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04" }),
    templateId: z.string().min(1).optional(),
    computeType: z.enum(COMPUTE_TYPES).optional().openapi({ description: "Default GPU" }),
    cloudType: z.enum(["SECURE", "COMMUNITY"]).optional().openapi({ description: "Default SECURE" }),
    gpuTypeIds: z.array(z.enum(GPU_TYPE_IDS)).min(1).optional().openapi({ description: "GPU types in priority order: the pod gets the first (every type is available here)" }),
    gpuTypePriority: z.enum(["availability", "custom"]).optional(),
    gpuCount: int().min(1).optional().openapi({ description: "Default 1" }),
    cpuFlavorIds: z.array(z.enum(POD_CPU_FLAVOR_IDS)).min(1).optional(),
    cpuFlavorPriority: z.enum(["availability", "custom"]).optional(),
    vcpuCount: int().min(1).optional().openapi({ description: `CPU pods: vCPUs (default ${POD_DEFAULTS.cpuVcpuCount})` }),
    minRAMPerGPU: int().min(1).optional(),
    minVCPUPerGPU: int().min(1).optional(),
    containerDiskInGb: disk("Container disk", POD_DEFAULTS.containerDiskInGb, 1),
    volumeInGb: disk("Pod volume", POD_DEFAULTS.volumeInGb),
    volumeMountPath: z.string().optional(),
    networkVolumeId: z.string().min(1).optional().openapi({ description: "The pod is placed in the volume's data center" }),
    containerRegistryAuthId: z.string().min(1).optional(),
    dataCenterIds: z.array(z.enum(DATA_CENTER_IDS)).min(1).optional(),
    dataCenterPriority: z.enum(["availability", "custom"]).optional(),
    countryCodes: strings(),
    allowedCudaVersions: z.array(z.enum(CUDA_VERSIONS)).optional(),
    ...containerRun,
    interruptible: z.boolean().optional(),
    locked: z.boolean().optional(),
    globalNetworking: z.boolean().optional(),
    supportPublicIp: z.boolean().optional(),
    minDiskBandwidthMBps: z.number().min(0).optional(),
    minDownloadMbps: z.number().min(0).optional(),
    minUploadMbps: z.number().min(0).optional(),
  })
  .openapi("PodCreateInput");

/** v1 PodUpdateInput: changes beyond `name` and `locked` reset a running pod. */
export const UpdatePodV1Schema = z
  .object({
    name: z.string().max(191).optional(),
    imageName: z.string().min(1).optional(),
    containerDiskInGb: disk("Container disk", POD_DEFAULTS.containerDiskInGb, 1),
    volumeInGb: disk("Pod volume", POD_DEFAULTS.volumeInGb),
    volumeMountPath: z.string().optional(),
    containerRegistryAuthId: z.string().min(1).optional(),
    ...containerRun,
    locked: z.boolean().optional(),
    globalNetworking: z.boolean().optional(),
  })
  .openapi("PodUpdateInput", { description: "Only the fields given change; a change beyond name and locked resets a running pod (lastStartedAt moves)" });

const GpuSchema = z.object({ id: z.string(), count: z.int(), displayName: z.string(), securePrice: z.number(), communityPrice: z.number() });

/** v1 Pod. `machine`, `networkVolume`, `savingsPlans` and `template` appear when asked for. */
export const PodV1Schema = z
  .object({
    id: z.string().openapi({ example: "xedezhzb9la3ye" }),
    name: z.string(),
    image: z.string(),
    desiredStatus: z.enum(POD_STATUSES),
    lastStartedAt: z.string().optional().openapi({ description: "Virtual time, ISO 8601", example: "2024-07-12T19:14:40.144Z" }),
    lastStatusChange: z.string().openapi({ example: "Rented by User: Fri Jul 12 2024 19:14:40 GMT+0000 (Coordinated Universal Time)" }),
    costPerHr: z.number().openapi({ description: "USD per hour while running, at the configured prices" }),
    adjustedCostPerHr: z.number(),
    consumerUserId: z.string(),
    containerDiskInGb: z.int(),
    containerRegistryAuthId: z.string().optional(),
    cpuFlavorId: z.string().optional(),
    dockerEntrypoint: z.array(z.string()),
    dockerStartCmd: z.array(z.string()),
    endpointId: z.string().optional().openapi({ description: "Serverless workers (includeWorkers) only" }),
    aiApiId: z.string().optional(),
    slsVersion: z.int().optional(),
    env: z.record(z.string(), z.string()),
    gpu: GpuSchema.optional(),
    interruptible: z.boolean(),
    locked: z.boolean(),
    machineId: z.string(),
    machine: z.record(z.string(), z.unknown()).optional(),
    memoryInGb: z.number(),
    networkVolumeId: z.string().optional(),
    networkVolume: z.object({ id: z.string(), name: z.string(), size: z.int(), dataCenterId: z.string() }).optional(),
    portMappings: z.record(z.string(), z.int()).nullable(),
    ports: z.array(z.string()),
    publicIp: z.string().nullable().openapi({ description: "Always null: no container runs" }),
    savingsPlans: z.array(z.unknown()).optional(),
    templateId: z.string().optional(),
    template: z.record(z.string(), z.unknown()).optional(),
    vcpuCount: z.number(),
    volumeEncrypted: z.boolean(),
    volumeInGb: z.int(),
    volumeMountPath: z.string(),
  })
  .openapi("Pod");

const includes = {
  includeMachine: boolQuery().openapi({ description: "Add `machine`" }),
  includeNetworkVolume: boolQuery().openapi({ description: "Add `networkVolume`" }),
  includeSavingsPlans: boolQuery().openapi({ description: "Add `savingsPlans` (always empty here)" }),
  includeTemplate: boolQuery().openapi({ description: "Add `template`" }),
  includeWorkers: boolQuery().openapi({ description: "Also serverless workers, as pods of their endpoint" }),
};

export const GetPodV1Query = z.object(includes);

export const ListPodsV1Query = z.object({
  ...includes,
  computeType: z.enum(COMPUTE_TYPES).optional(),
  cpuFlavorId: listQuery(z.string().min(1)),
  dataCenterId: listQuery(z.string().min(1)),
  desiredStatus: z.enum(POD_STATUSES).optional(),
  endpointId: z.string().max(191).optional().openapi({ description: "Workers of this endpoint (with includeWorkers)" }),
  gpuTypeId: listQuery(z.string().min(1)),
  id: z.string().optional(),
  imageName: z.string().optional(),
  name: z.string().max(191).optional(),
  networkVolumeId: z.string().optional(),
  templateId: z.string().optional(),
});

export type PodIncludes = z.infer<typeof GetPodV1Query>;

type PodView = z.infer<typeof PodV1Schema>;

/** "NVIDIA GeForce RTX 4090" → "RTX 4090", as the service's display names read. */
const displayName = (gpuTypeId: string) => gpuTypeId.replace(/^(NVIDIA|AMD)\s+(GeForce\s+)?/, "").trim();

/** A pod as the v1 surface shows it; timestamps are virtual time in ISO 8601. */
export function toPodV1(core: Pick<ViewContext, "pods" | "endpoints" | "networkVolumes" | "templates">, pod: Pod, inc: PodIncludes = {}): PodView {
  const cost = core.pods.costPerHr(pod);
  const view: PodView = {
    id: pod.id,
    name: pod.name,
    image: pod.imageName,
    desiredStatus: pod.desiredStatus,
    lastStatusChange: pod.lastStatusChange,
    costPerHr: cost,
    adjustedCostPerHr: cost,
    consumerUserId: EMULATOR_USER_ID,
    containerDiskInGb: pod.containerDiskInGb,
    dockerEntrypoint: pod.dockerEntrypoint,
    dockerStartCmd: pod.dockerStartCmd,
    env: pod.env,
    interruptible: pod.interruptible,
    locked: pod.locked,
    machineId: pod.machineId,
    memoryInGb: pod.memoryInGb,
    portMappings: null,
    ports: pod.ports,
    publicIp: null,
    vcpuCount: pod.vcpuCount,
    volumeEncrypted: false,
    volumeInGb: pod.volumeInGb,
    volumeMountPath: pod.volumeMountPath,
  };
  if (pod.lastStartedAt !== undefined) view.lastStartedAt = new Date(pod.lastStartedAt).toISOString();
  if (pod.containerRegistryAuthId) view.containerRegistryAuthId = pod.containerRegistryAuthId;
  if (pod.cpuFlavorId) view.cpuFlavorId = pod.cpuFlavorId;
  if (pod.templateId) view.templateId = pod.templateId;
  if (pod.networkVolumeId) view.networkVolumeId = pod.networkVolumeId;
  if (pod.gpuTypeId) {
    const price = pod.gpuCount > 0 ? cost / pod.gpuCount : 0;
    view.gpu = { id: pod.gpuTypeId, count: pod.gpuCount, displayName: displayName(pod.gpuTypeId), securePrice: price, communityPrice: price };
  }
  if (pod.endpointId) {
    view.endpointId = pod.endpointId;
    view.aiApiId = pod.endpointId;
    const version = core.endpoints.spec(pod.endpointId, "QUEUE")?.extra.version;
    view.slsVersion = typeof version === "number" ? version : 0;
  }
  if (inc.includeMachine) {
    view.machine = {
      gpuTypeId: pod.gpuTypeId,
      cpuTypeId: pod.cpuFlavorId,
      dataCenterId: pod.dataCenterId,
      location: pod.dataCenterId,
      secureCloud: pod.cloudType === "SECURE",
      supportPublicIp: false,
      gpuDisplayName: pod.gpuTypeId ? displayName(pod.gpuTypeId) : undefined,
      costPerHr: cost,
    };
  }
  if (inc.includeNetworkVolume && pod.networkVolumeId && core.networkVolumes.has(pod.networkVolumeId)) {
    const v = core.networkVolumes.get(pod.networkVolumeId);
    view.networkVolume = { id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenter };
  }
  if (inc.includeSavingsPlans) view.savingsPlans = [];
  if (inc.includeTemplate && pod.templateId) {
    const t = core.templates.find(pod.templateId);
    if (t) {
      // The emulator's own `handler` and bookkeeping times are not v1 Template fields.
      const { handler: _handler, createdAt: _created, updatedAt: _updated, ...fields } = t;
      view.template = fields;
    }
  }
  return view;
}

/** `/v1/pods`: filters, `includeWorkers` and the other includes, a create answered 201. */
export const podV1 = view<Pod, Pick<ViewContext, "pods" | "endpoints" | "networkVolumes" | "templates">>(V1, "pods", "Pod", PodV1Schema, (core, p, c) => toPodV1(core, p, queryOf<PodIncludes>(c)), {
  createStatus: 201,
  query: { list: ListPodsV1Query, get: GetPodV1Query },
  list: (core, c) => core.pods.list(queryOf(c)),
  get: (core, id, c) => core.pods.get(id, queryOf<PodIncludes>(c).includeWorkers),
  create: withBody(CreatePodV1Schema, (core, body) => core.pods.create(body)),
  update: withBody(UpdatePodV1Schema, (core, body, _c, id) => core.pods.update(id, body)),
  docs: {
    list: { description: "Filters combine; list filters take repeated or comma-separated values. Serverless workers are listed only with includeWorkers=true." },
    create: { description: "The pod is RUNNING at once and bills from now on. It gets the first of gpuTypeIds (or cpuFlavorIds), and the attached network volume's data center." },
    update: { description: "Changes beyond name and locked reset a running pod: lastStartedAt moves to now." },
  },
});
