import { z } from "zod";
import type { ConfigPart } from "../../config/part.js";
import { DEFAULT_HANDLER } from "../../domain/endpoint.js";
import { resourceId } from "../shared/config-id.js";
import { TEMPLATE_CATEGORIES } from "./model.js";

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

/**
 * The templates' part of the config, with the handler of endpoints whose template names none; a
 * configured endpoint without a handler runs its template's, else that one.
 */
export const TEMPLATES_CONFIG = {
  fields: {
    defaultHandler: z
      .string()
      .min(1)
      .default(DEFAULT_HANDLER)
      .describe("Handler of endpoints whose template names none (and of configured endpoints without handler or template)"),
    templates: z.array(TemplateConfigSchema).default([]).describe("Templates of /v1/templates; `handler` picks what their endpoints run"),
  },
  check: checkTemplatesConfig,
  endpointHandler: (config: { templates: TemplateConfig[]; defaultHandler: string }, e: { templateId?: string | undefined }) =>
    (e.templateId !== undefined ? config.templates.find((t) => t.id === e.templateId)?.handler : undefined) ?? config.defaultHandler,
} satisfies ConfigPart;

/** Cross-checks: unique ids and names. */
function checkTemplatesConfig(config: { templates: TemplateConfig[] }, ctx: z.RefinementCtx): void {
  const ids = new Set<string>();
  const names = new Set<string>();
  config.templates.forEach((t, i) => {
    if (ids.has(t.id)) ctx.addIssue({ code: "custom", message: `duplicate template id "${t.id}"`, path: ["templates", i, "id"] });
    if (names.has(t.name)) ctx.addIssue({ code: "custom", message: `duplicate template name "${t.name}"; template names are unique`, path: ["templates", i, "name"] });
    ids.add(t.id);
    names.add(t.name);
  });
}
