import type { z } from "@hono/zod-openapi";
import { EMULATOR_USER_ID } from "../shared/user.js";
import type { Pod } from "./pod.js";
import type { ViewContext } from "../shared/service.js";
import type { PodIncludes, PodSchema } from "./schemas.js";

type PodView = z.infer<typeof PodSchema>;

/** "NVIDIA GeForce RTX 4090" → "RTX 4090", as the service's display names read. */
const displayName = (gpuTypeId: string) => gpuTypeId.replace(/^(NVIDIA|AMD)\s+(GeForce\s+)?/, "").trim();

/** A pod as the v1 surface shows it; timestamps are virtual time in ISO 8601. */
export function toV1Pod(core: ViewContext, pod: Pod, inc: PodIncludes = {}): PodView {
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
