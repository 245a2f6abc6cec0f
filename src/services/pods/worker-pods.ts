import { POD_DEFAULTS, statusChange, type Pod } from "./record.js";
import type { PodRefs } from "./model.js";
import { DEFAULT_DATA_CENTER_ID } from "../shared/pricing.js";
import type { LiveWorker } from "../billing/index.js";

/**
 * A serverless worker shown as a pod of its endpoint (the v1 pod listing's `includeWorkers`): the
 * real service runs workers as pods. It is RUNNING from its creation; it has no disk or image of
 * its own beyond its endpoint's template.
 */
export function workerPod(w: LiveWorker, refs: Pick<PodRefs, "template" | "endpointName">): Pod {
  return {
    id: w.workerId,
    name: refs.endpointName(w.endpointId) ?? w.endpointId,
    imageName: (w.attrs.templateId && refs.template(w.attrs.templateId)?.imageName) || "",
    templateId: w.attrs.templateId,
    computeType: w.attrs.gpuTypeId ? "GPU" : "CPU",
    cloudType: "SECURE",
    gpuTypeId: w.attrs.gpuTypeId,
    gpuCount: w.attrs.gpuCount ?? 0,
    cpuFlavorId: undefined,
    vcpuCount: w.attrs.vcpuCount ?? 0,
    memoryInGb: 0,
    containerDiskInGb: 0,
    volumeInGb: 0,
    volumeMountPath: POD_DEFAULTS.volumeMountPath,
    networkVolumeId: undefined,
    containerRegistryAuthId: undefined,
    dataCenterId: w.attrs.dataCenterId ?? DEFAULT_DATA_CENTER_ID,
    env: {},
    ports: [],
    dockerEntrypoint: [],
    dockerStartCmd: [],
    interruptible: false,
    locked: false,
    globalNetworking: false,
    machineId: w.workerId,
    endpointId: w.endpointId,
    desiredStatus: "RUNNING",
    lastStartedAt: w.startedAt,
    lastStatusChange: statusChange("Rented", w.startedAt),
    createdAt: w.startedAt,
  };
}
