import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { Template } from "../../../domain/management/templates.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { serveResource, V1, withBody, type ResourceRoutes } from "../../resource.js";
import { CreateTemplateSchema, TAG, TemplateSchema, UpdateTemplateSchema, flagQuery, toTemplateView } from "./schemas.js";

const ListQuery = z.object({
  includeEndpointBoundTemplates: flagQuery("includeEndpointBoundTemplates", "Accepted; every template here is the user's own, so all are listed"),
  includePublicTemplates: flagQuery("includePublicTemplates", "Accepted; there are no public templates besides the user's"),
  includeRunpodTemplates: flagQuery("includeRunpodTemplates", "Accepted; there are no official templates in the emulator"),
});

/** Templates: `/v1/templates[/{templateId}[/update]]`. */
export const templatesResource: ResourceRoutes<Template> = {
  tag: TAG,
  noun: "template",
  list: (core) => core.templates.list(),
  get: (core, id) => core.templates.get(id),
  delete: (core, id) => core.templates.delete(id),
  docs: {
    update: {
      description:
        "Only the fields given change. A change of what workers run (image, env, handler, ...) is a new release of the endpoints made from the template: their `version` goes up and they run the new handler.",
    },
    delete: { description: "Refused with 400 while an endpoint is made from the template." },
  },
  views: [
    {
      version: V1,
      path: "templates",
      idParam: "templateId",
      names: { one: "Template", many: "Templates" },
      schema: TemplateSchema,
      query: { list: ListQuery, get: ListQuery },
      show: (_core, t) => toTemplateView(t),
      create: withBody(CreateTemplateSchema, (core, body) => core.templates.create(body)),
      update: withBody(UpdateTemplateSchema, (core, body, _c, id) => core.templates.update(id, body)),
    },
  ],
};

export function templateRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  serveResource(core, router, templatesResource);
}
