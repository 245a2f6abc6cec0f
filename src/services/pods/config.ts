import { z } from "zod";
import { CUDA_VERSIONS, DATA_CENTER_IDS, GPU_TYPE_IDS } from "../shared/catalog/catalog.js";
import { POD_CPU_FLAVOR_IDS } from "./record.js";
import type { ConfigPart } from "../../config/part.js";
import { configRegistryAuthId, configVolumeId, resourceId } from "../shared/config-id.js";
import { stableId } from "../shared/stable-id.js";

export const PodConfigSchema = z
  .strictObject({
    id: resourceId("Pod").optional().describe("Default: derived from the name, the same at every start"),
    name: z.string().min(1).max(191),
    imageName: z.string().min(1).optional().describe("Shown as the pod's image; nothing is pulled. Required unless templateId is set"),
    templateId: z.string().min(1).optional().describe("A template of templates[]"),
    desiredStatus: z.enum(["RUNNING", "EXITED"]).default("RUNNING").describe("Status the pod has when first created"),
    computeType: z.enum(["GPU", "CPU"]).optional(),
    cloudType: z.enum(["SECURE", "COMMUNITY"]).optional(),
    gpuTypeIds: z.array(z.enum(GPU_TYPE_IDS)).min(1).optional().describe("GPU types in priority order; the pod gets the first"),
    gpuCount: z.int().min(1).optional(),
    cpuFlavorIds: z.array(z.enum(POD_CPU_FLAVOR_IDS)).min(1).optional(),
    vcpuCount: z.int().min(1).optional(),
    containerDiskInGb: z.int().min(1).optional(),
    volumeInGb: z.int().min(0).optional(),
    volumeMountPath: z.string().optional(),
    networkVolumeId: z.string().min(1).optional().describe("A volume of networkVolumes[]"),
    containerRegistryAuthId: z.string().min(1).optional().describe("An auth of containerRegistryAuths[]"),
    dataCenterIds: z.array(z.enum(DATA_CENTER_IDS)).min(1).optional(),
    allowedCudaVersions: z.array(z.enum(CUDA_VERSIONS)).optional(),
    env: z.record(z.string(), z.string()).optional(),
    ports: z.array(z.string()).optional(),
    dockerEntrypoint: z.array(z.string()).optional(),
    dockerStartCmd: z.array(z.string()).optional(),
    interruptible: z.boolean().optional(),
    locked: z.boolean().optional(),
  })
  .refine((p) => p.imageName !== undefined || p.templateId !== undefined, { message: "expected imageName or templateId", path: ["imageName"] });
export type PodConfig = z.infer<typeof PodConfigSchema>;

/** The id a configured pod gets: its own, or one derived from its name. */
export const configPodId = (p: Pick<PodConfig, "id" | "name">): string => p.id ?? stableId(`pod:${p.name}`);

/** The pods' part of the config. */
export const PODS_CONFIG = {
  fields: {
    pods: z.array(PodConfigSchema).default([]).describe("Pods of /v1/pods, created at start when missing from the database"),
  },
  check: checkPodsConfig,
} satisfies ConfigPart;

/** What the pods' checks read of the config: theirs, and what pods name of other parts (absent when those are not built). */
export interface PodsConfig {
  pods: PodConfig[];
  templates?: Array<{ id: string }>;
  networkVolumes?: Array<Parameters<typeof configVolumeId>[0]>;
  containerRegistryAuths?: Array<Parameters<typeof configRegistryAuthId>[0]>;
}

/** Cross-checks: unique ids, references that lead somewhere (the ids of volumes and registry auths as their services derive them). */
function checkPodsConfig(config: PodsConfig, ctx: z.RefinementCtx): void {
  const authIds = new Set((config.containerRegistryAuths ?? []).map(configRegistryAuthId));
  const templates = new Set((config.templates ?? []).map((t) => t.id));
  const volumes = new Set((config.networkVolumes ?? []).map(configVolumeId));
  const podIds = new Set<string>();
  config.pods.forEach((p, i) => {
    const id = configPodId(p);
    if (podIds.has(id)) ctx.addIssue({ code: "custom", message: p.id ? `duplicate pod id "${id}"` : `pod "${p.name}" is declared twice; give each an id`, path: ["pods", i, p.id ? "id" : "name"] });
    podIds.add(id);
    const ref = (field: string, ok: boolean, message: string) => ok || ctx.addIssue({ code: "custom", message, path: ["pods", i, field] });
    if (p.templateId !== undefined) ref("templateId", templates.has(p.templateId), `unknown template "${p.templateId}"; declare it in templates[]`);
    if (p.networkVolumeId !== undefined) ref("networkVolumeId", volumes.has(p.networkVolumeId), `unknown network volume "${p.networkVolumeId}"; declare it (with this id) in networkVolumes[]`);
    if (p.containerRegistryAuthId !== undefined) {
      ref("containerRegistryAuthId", authIds.has(p.containerRegistryAuthId), `unknown container registry auth "${p.containerRegistryAuthId}"; declare it (with this id) in containerRegistryAuths[]`);
    }
  });
}
