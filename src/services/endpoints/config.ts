import { z } from "zod";
import type { ConfigPart } from "../../config/part.js";
import { configVolumeId, resourceId } from "../shared/config-id.js";

/**
 * The endpoints' part of the config: the management fields a configured endpoint may carry
 * besides its queue settings (the engine's `endpoints[]`), and that what they name exists.
 */
export const ENDPOINTS_CONFIG = {
  fields: {},
  endpointFields: {
    templateId: resourceId("Template").optional().describe("A template of templates[]; its handler runs the endpoint unless `handler` is set"),
    gpuTypeIds: z.array(z.string().min(1)).optional().describe("GPU types in priority order (workers get the first)"),
    gpuCount: z.int().min(1).optional(),
    networkVolumeId: z.string().min(1).optional().describe("A volume of networkVolumes[]"),
  },
  check: checkEndpointsConfig,
} satisfies ConfigPart;

/** What the endpoints' checks read of the config (other parts absent when their services are not built). */
export interface EndpointsConfig {
  templates?: Array<{ id: string; isServerless: boolean }>;
  networkVolumes?: Array<Parameters<typeof configVolumeId>[0]>;
  endpoints: Array<{ templateId?: string | undefined; networkVolumeId?: string | undefined }>;
}

/** Cross-checks: the templates and volumes configured endpoints name lead somewhere. */
function checkEndpointsConfig(config: EndpointsConfig, ctx: z.RefinementCtx): void {
  const templates = new Map((config.templates ?? []).map((t) => [t.id, t]));
  const volumes = new Set((config.networkVolumes ?? []).map(configVolumeId));
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
