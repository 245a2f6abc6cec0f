import { z } from "zod";
import { resourceId } from "../shared/config-id.js";

/** Management fields a configured endpoint may carry besides its queue settings. */
export const ENDPOINT_MANAGEMENT_CONFIG = {
  templateId: resourceId("Template").optional().describe("A template of templates[]; its handler runs the endpoint unless `handler` is set"),
  gpuTypeIds: z.array(z.string().min(1)).optional().describe("GPU types in priority order (workers get the first)"),
  gpuCount: z.int().min(1).optional(),
  networkVolumeId: z.string().min(1).optional().describe("A volume of networkVolumes[]"),
};

interface Volume {
  id?: string | undefined;
  name: string;
  dataCenter: string;
}

interface EndpointsConfig {
  defaultHandler: string;
  templates: Array<{ id: string; handler?: string | undefined; isServerless: boolean }>;
  networkVolumes: Volume[];
  endpoints: Array<{ handler?: string | undefined; templateId?: string | undefined; networkVolumeId?: string | undefined }>;
}

/** Cross-checks: the templates and volumes configured endpoints name lead somewhere. */
export function checkEndpointsConfig(config: EndpointsConfig, volumeId: (v: Volume) => string, ctx: z.RefinementCtx): void {
  const templates = new Map(config.templates.map((t) => [t.id, t]));
  const volumes = new Set(config.networkVolumes.map(volumeId));
  config.endpoints.forEach((e, i) => {
    const template = e.templateId === undefined ? undefined : templates.get(e.templateId);
    if (e.templateId !== undefined && !template) {
      ctx.addIssue({ code: "custom", message: `unknown template "${e.templateId}"; declare it in templates[]`, path: ["endpoints", i, "templateId"] });
    } else if (template?.isServerless === false) {
      ctx.addIssue({ code: "custom", message: `template "${e.templateId}" has isServerless: false; endpoints are made from serverless templates`, path: ["endpoints", i, "templateId"] });
    }
    if (e.networkVolumeId !== undefined && !volumes.has(e.networkVolumeId)) {
      ctx.addIssue({ code: "custom", message: `unknown network volume "${e.networkVolumeId}"; declare it (with this id) in networkVolumes[]`, path: ["endpoints", i, "networkVolumeId"] });
    }
  });
}

/**
 * Gives every configured endpoint its handler: its own, else its template's, else the config's
 * `defaultHandler`, so the rest of the emulator sees one resolved name.
 */
export function resolveEndpointHandlers<C extends EndpointsConfig>(config: C): Omit<C, "endpoints"> & { endpoints: Array<C["endpoints"][number] & { handler: string }> } {
  const byId = new Map(config.templates.map((t) => [t.id, t]));
  return {
    ...config,
    endpoints: config.endpoints.map((e) => ({
      ...e,
      handler: e.handler ?? (e.templateId !== undefined ? byId.get(e.templateId)?.handler : undefined) ?? config.defaultHandler,
    })),
  };
}
