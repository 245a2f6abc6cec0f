import { z } from "@hono/zod-openapi";
import { V1, withBody, view } from "../shared/rest.js";
import { TEMPLATE_CATEGORIES, type Template } from "./model.js";
import { int } from "../../http/schemas.js";
import type { ViewContext } from "../shared/service.js";

/** v1 Template. `handler` is the emulator's extension: the handler its endpoints run. */
export const TemplateV1Schema = z
  .object({
    id: z.string().openapi({ example: "30zmvf89kd" }),
    name: z.string(),
    imageName: z.string(),
    isServerless: z.boolean(),
    category: z.enum(TEMPLATE_CATEGORIES),
    containerDiskInGb: z.int(),
    volumeInGb: z.int(),
    volumeMountPath: z.string(),
    env: z.record(z.string(), z.string()),
    ports: z.array(z.string()),
    readme: z.string(),
    isPublic: z.boolean(),
    isRunpod: z.boolean(),
    earned: z.number(),
    runtimeInMin: z.int(),
    dockerEntrypoint: z.array(z.string()),
    dockerStartCmd: z.array(z.string()),
    containerRegistryAuthId: z.string().optional(),
    handler: z.string().optional().openapi({ description: "minipod: the handler endpoints made from this template run (unset: the config's defaultHandler)" }),
  })
  .openapi("Template");

const fields = {
  imageName: z.string().min(1).openapi({ example: "runpod/worker-v1-vllm:stable" }),
  isServerless: z.boolean().openapi({ description: "Endpoints can only be made from serverless templates; default false" }),
  containerDiskInGb: int().min(1).openapi({ description: "Default 50" }),
  volumeInGb: int().min(0).openapi({ description: "Default 20" }),
  volumeMountPath: z.string().openapi({ description: "Default /workspace" }),
  env: z.record(z.string(), z.string()).openapi({ example: { ENV_VAR: "value" } }),
  ports: z.array(z.string()).openapi({ example: ["8888/http", "22/tcp"] }),
  readme: z.string(),
  isPublic: z.boolean(),
  dockerEntrypoint: z.array(z.string()),
  dockerStartCmd: z.array(z.string()),
  containerRegistryAuthId: z.string().min(1),
  handler: z
    .string()
    .min(1)
    .openapi({ description: 'minipod: a registered handler name ("echo", "scripted", or one given to createEmulator); module paths only in the config' }),
};

export const CreateTemplateV1Schema = z
  .object({
    name: z.string().min(1).openapi({ description: "Unique among templates" }),
    category: z.enum(TEMPLATE_CATEGORIES).optional().openapi({ description: "Default NVIDIA" }),
    ...fields,
    isServerless: fields.isServerless.optional(),
    containerDiskInGb: fields.containerDiskInGb.optional(),
    volumeInGb: fields.volumeInGb.optional(),
    volumeMountPath: fields.volumeMountPath.optional(),
    env: fields.env.optional(),
    ports: fields.ports.optional(),
    readme: fields.readme.optional(),
    isPublic: fields.isPublic.optional(),
    dockerEntrypoint: fields.dockerEntrypoint.optional(),
    dockerStartCmd: fields.dockerStartCmd.optional(),
    containerRegistryAuthId: fields.containerRegistryAuthId.optional(),
    handler: fields.handler.optional(),
  })
  .openapi("TemplateCreateInput");

export const UpdateTemplateV1Schema = z
  .object({ name: z.string().min(1), ...fields })
  .partial()
  .openapi("TemplateUpdateInput", { description: "Only the fields given change; endpoints made from the template follow it" });

/**
 * A boolean query parameter: `true` or `false` (query values arrive as strings, and coercion
 * would read "false" as true).
 */
export const flagQuery = (name: string, description: string) =>
  z
    .enum(["true", "false"], { error: () => "expected true or false" })
    .optional()
    .openapi({ param: { name, in: "query" }, description });

export const toTemplateV1 = (t: Template): z.infer<typeof TemplateV1Schema> => {
  const view: z.infer<typeof TemplateV1Schema> = {
    id: t.id,
    name: t.name,
    imageName: t.imageName,
    isServerless: t.isServerless,
    category: t.category,
    containerDiskInGb: t.containerDiskInGb,
    volumeInGb: t.volumeInGb,
    volumeMountPath: t.volumeMountPath,
    env: t.env,
    ports: t.ports,
    readme: t.readme,
    isPublic: t.isPublic,
    isRunpod: false,
    earned: 0,
    runtimeInMin: 0,
    dockerEntrypoint: t.dockerEntrypoint,
    dockerStartCmd: t.dockerStartCmd,
  };
  if (t.containerRegistryAuthId !== undefined) view.containerRegistryAuthId = t.containerRegistryAuthId;
  if (t.handler !== undefined) view.handler = t.handler;
  return view;
};

const ListQuery = z.object({
  includeEndpointBoundTemplates: flagQuery("includeEndpointBoundTemplates", "Also list the templates made for endpoints created on v2 (each endpoint's own)"),
  includePublicTemplates: flagQuery("includePublicTemplates", "Accepted; there are no public templates besides the user's"),
  includeRunpodTemplates: flagQuery("includeRunpodTemplates", "Accepted; there are no official templates in the emulator"),
});

/** `/v1/templates`: the templates made for endpoints created on v2 are listed with includeEndpointBoundTemplates only. */
export const templateV1 = view<Template, Pick<ViewContext, "templates">>(V1, "templates", "Template", TemplateV1Schema, (_core, t) => toTemplateV1(t), {
  query: { list: ListQuery, get: ListQuery },
  list: (core, c) => core.templates.list({ includeBound: (c.req.valid as (t: "query") => z.infer<typeof ListQuery>)("query").includeEndpointBoundTemplates === "true" }),
  create: withBody(CreateTemplateV1Schema, (core, body) => core.templates.create(body)),
  update: withBody(UpdateTemplateV1Schema, (core, body, _c, id) => core.templates.update(id, body)),
});
