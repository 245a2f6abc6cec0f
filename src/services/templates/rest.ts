import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Template } from "./model.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { serveResource, V1, V2, withBody, type ResourceRoutes } from "../shared/rest.js";
import { CreateTemplateSchema, TAG, TemplateSchema, UpdateTemplateSchema, flagQuery, toTemplateView } from "./v1.js";
import { CreateTemplateV2Schema, TemplateV2Schema, UpdateTemplateV2Schema, newTemplateFromV2, templateChangeFromV2, toTemplateV2 } from "./v2.js";

const names = { one: "Template", many: "Templates" };

const ListQuery = z.object({
  includeEndpointBoundTemplates: flagQuery("includeEndpointBoundTemplates", "Also list the templates made for endpoints created on v2 (each endpoint's own)"),
  includePublicTemplates: flagQuery("includePublicTemplates", "Accepted; there are no public templates besides the user's"),
  includeRunpodTemplates: flagQuery("includeRunpodTemplates", "Accepted; there are no official templates in the emulator"),
});

/**
 * Templates: `/v2/templates[/{id}]` and `/v1/templates[/{templateId}[/update]]`. The templates
 * made for endpoints created on v2 are listed on v1 with includeEndpointBoundTemplates only.
 */
export const templatesResource: ResourceRoutes<Template> = {
  tag: TAG,
  noun: "template",
  list: (core) => core.templates.list({ includeBound: false }),
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
      version: V2,
      path: "templates",
      names,
      listKey: "templates",
      schema: TemplateV2Schema,
      show: (_core, t) => toTemplateV2(t),
      create: withBody(CreateTemplateV2Schema, (core, body) => core.templates.create(newTemplateFromV2(body))),
      update: withBody(UpdateTemplateV2Schema, (core, body, _c, id) => core.templates.update(id, templateChangeFromV2(body))),
    },
    {
      version: V1,
      path: "templates",
      idParam: "templateId",
      names,
      schema: TemplateSchema,
      query: { list: ListQuery, get: ListQuery },
      list: (core, c) => core.templates.list({ includeBound: (c.req.valid as (t: "query") => z.infer<typeof ListQuery>)("query").includeEndpointBoundTemplates === "true" }),
      show: (_core, t) => toTemplateView(t),
      create: withBody(CreateTemplateSchema, (core, body) => core.templates.create(body)),
      update: withBody(UpdateTemplateSchema, (core, body, _c, id) => core.templates.update(id, body)),
    },
  ],
};

export function templateRoutes(core: ViewContext, router: OpenAPIHono<AppEnv>): void {
  serveResource(core, router, templatesResource);
}
