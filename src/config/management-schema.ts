import { z } from "zod";
import { VOLUME_TYPES } from "../services/shared/catalog/datacenter-catalog.js";
import { stableId } from "../services/shared/stable-id.js";
import { TEMPLATE_CATEGORIES } from "../services/templates/index.js";
import { NETWORK_VOLUME_SIZE_MAX_GB, NETWORK_VOLUME_SIZE_MIN_GB } from "../domain/limits.js";

const RESOURCE_ID = /^[A-Za-z0-9_-]+$/;
const resourceId = (what: string) =>
  z.string().min(1).max(64).regex(RESOURCE_ID, "expected letters, digits, '_' or '-'").describe(`${what} id`);

export const DEFAULT_HANDLER = "echo";

export const NetworkVolumeConfigSchema = z.strictObject({
  id: resourceId("Network volume").optional().describe("Network volume id; default: derived from name and dataCenter, the same at every start"),
  name: z.string().min(1),
  size: z.int().min(NETWORK_VOLUME_SIZE_MIN_GB).max(NETWORK_VOLUME_SIZE_MAX_GB).describe(`GB, ${NETWORK_VOLUME_SIZE_MIN_GB}..${NETWORK_VOLUME_SIZE_MAX_GB}`),
  dataCenter: z.string().min(1).describe("Data center id, e.g. EU-RO-1 (v1 calls it dataCenterId)"),
  type: z.enum(VOLUME_TYPES).default("STANDARD"),
});
export type NetworkVolumeConfig = z.infer<typeof NetworkVolumeConfigSchema>;

/** The id a configured volume gets: its own, or one derived from what it declares. */
export const configVolumeId = (v: Pick<NetworkVolumeConfig, "id" | "name" | "dataCenter">): string => v.id ?? stableId(`network-volume:${v.name}:${v.dataCenter}`);

export const TemplateConfigSchema = z.strictObject({
  id: resourceId("Template").describe("Template id: what endpoints name as templateId"),
  name: z.string().min(1).describe("Unique among templates"),
  imageName: z.string().min(1).default("minipod/handler:local").describe("Shown as the template's image; nothing is pulled"),
  handler: z
    .string()
    .min(1)
    .optional()
    .describe('Handler the endpoints made from this template run: "echo", "scripted", a registered name or a module path; default: defaultHandler'),
  isServerless: z.boolean().default(true).describe("Endpoints can only be made from serverless templates"),
  category: z.enum(TEMPLATE_CATEGORIES).optional(),
  containerDiskInGb: z.int().min(1).optional(),
  volumeInGb: z.int().min(0).optional(),
  volumeMountPath: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  ports: z.array(z.string()).optional(),
  readme: z.string().optional(),
  isPublic: z.boolean().optional(),
  dockerEntrypoint: z.array(z.string()).optional(),
  dockerStartCmd: z.array(z.string()).optional(),
});
export type TemplateConfig = z.infer<typeof TemplateConfigSchema>;

/** Management fields a configured endpoint may carry besides its queue settings. */
export const ENDPOINT_MANAGEMENT_CONFIG = {
  templateId: resourceId("Template").optional().describe("A template of templates[]; its handler runs the endpoint unless `handler` is set"),
  gpuTypeIds: z.array(z.string().min(1)).optional().describe("GPU types in priority order (workers get the first)"),
  gpuCount: z.int().min(1).optional(),
  networkVolumeId: z.string().min(1).optional().describe("A volume of networkVolumes[]"),
};

/** The top-level config keys of the management surface. */
export const MANAGEMENT_CONFIG = {
  defaultHandler: z
    .string()
    .min(1)
    .default(DEFAULT_HANDLER)
    .describe("Handler of endpoints whose template names none (and of configured endpoints without handler or template)"),
  templates: z.array(TemplateConfigSchema).default([]).describe("Templates of /v1/templates; `handler` picks what their endpoints run"),
  networkVolumes: z.array(NetworkVolumeConfigSchema).default([]).describe("Network volumes of /v2/network-volumes and /v1/networkvolumes"),
};

interface ManagedConfig {
  defaultHandler: string;
  templates: TemplateConfig[];
  networkVolumes: NetworkVolumeConfig[];
  endpoints: Array<{ handler?: string | undefined; templateId?: string | undefined; networkVolumeId?: string | undefined }>;
}

/** Cross-checks of the management keys: unique ids and names, references that lead somewhere. */
export function checkManagementConfig(config: ManagedConfig, ctx: z.RefinementCtx): void {
  const templateIds = new Map<string, TemplateConfig>();
  const templateNames = new Set<string>();
  config.templates.forEach((t, i) => {
    if (templateIds.has(t.id)) ctx.addIssue({ code: "custom", message: `duplicate template id "${t.id}"`, path: ["templates", i, "id"] });
    if (templateNames.has(t.name)) ctx.addIssue({ code: "custom", message: `duplicate template name "${t.name}"; template names are unique`, path: ["templates", i, "name"] });
    templateIds.set(t.id, t);
    templateNames.add(t.name);
  });
  const volumeIds = new Set<string>();
  config.networkVolumes.forEach((v, i) => {
    const id = configVolumeId(v);
    if (volumeIds.has(id)) {
      const message = v.id ? `duplicate network volume id "${id}"` : `network volume "${v.name}" in ${v.dataCenter} is declared twice; give each an id`;
      ctx.addIssue({ code: "custom", message, path: ["networkVolumes", i, v.id ? "id" : "name"] });
    }
    volumeIds.add(id);
  });
  config.endpoints.forEach((e, i) => {
    const template = e.templateId === undefined ? undefined : templateIds.get(e.templateId);
    if (e.templateId !== undefined && !template) {
      ctx.addIssue({ code: "custom", message: `unknown template "${e.templateId}"; declare it in templates[]`, path: ["endpoints", i, "templateId"] });
    } else if (template?.isServerless === false) {
      ctx.addIssue({ code: "custom", message: `template "${e.templateId}" has isServerless: false; endpoints are made from serverless templates`, path: ["endpoints", i, "templateId"] });
    }
    if (e.networkVolumeId !== undefined && !volumeIds.has(e.networkVolumeId)) {
      ctx.addIssue({ code: "custom", message: `unknown network volume "${e.networkVolumeId}"; declare it (with this id) in networkVolumes[]`, path: ["endpoints", i, "networkVolumeId"] });
    }
  });
}

/**
 * Gives every configured endpoint its handler: its own, else its template's, else the config's
 * `defaultHandler`, so the rest of the emulator sees one resolved name.
 */
export function resolveEndpointHandlers<C extends ManagedConfig>(config: C): Omit<C, "endpoints"> & { endpoints: Array<C["endpoints"][number] & { handler: string }> } {
  const byId = new Map(config.templates.map((t) => [t.id, t]));
  return {
    ...config,
    endpoints: config.endpoints.map((e) => ({
      ...e,
      handler: e.handler ?? (e.templateId !== undefined ? byId.get(e.templateId)?.handler : undefined) ?? config.defaultHandler,
    })),
  };
}
