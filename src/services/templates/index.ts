import { TEMPLATES_CONFIG } from "./config.js";
import { templatesGraphQL } from "./graphql.js";
import { documentsOf, type ServiceDef, type BuildReach, type SeedReach } from "../shared/service.js";
import { resource, serveResource } from "../shared/rest.js";
import { templateV1 } from "./v1.js";
import { templateV2 } from "./v2.js";
import { TemplateService, type Template } from "./model.js";
import type { ViewContext } from "../shared/service.js";

// What other services use of this one.
export { TemplateV1Schema, flagQuery, toTemplateV1 } from "./v1.js";
export { type NewTemplate, type Template, type TemplateChange, type TemplateEvent, type TemplateService } from "./model.js";
export { TemplateV2Schema } from "./v2.js";
export { toGraphQLTemplate } from "./graphql.js";

const collections = { v1: ["templates"], v2: ["templates"] } as const;

/** Templates: `/v2/templates`, `/v1/templates`, and the config's `templates` (and `defaultHandler`). */
export const templates: ServiceDef<"templates", { templates: TemplateService }, typeof collections, typeof TEMPLATES_CONFIG> = {
  name: "templates",
  config: TEMPLATES_CONFIG,
  collections,
  graphql: templatesGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock" | "handlers"; services: "endpointManager" }>) => ({
    templates: new TemplateService({
      ...documentsOf<Template>(ctx, "template"),
      handlerNames: () => ctx.engine.handlers.names(),
      // Endpoints are built after templates: this runs on requests only.
      usedBy: (id) => ctx.services.endpointManager.usingTemplate(id),
    }),
  }),
  // Templates on both REST versions; the templates made for endpoints created on v2 are left out of the lists.
  routes: (app, views) => serveResource(views, app, resource("Templates", "template", (core: Pick<ViewContext, "templates">) => core.templates, {
    list: (core: Pick<ViewContext, "templates">) => core.templates.list({ includeBound: false }),
    docs: {
      update: {
        description:
          "Only the fields given change. A change of what workers run (image, env, handler, ...) is a new release of the endpoints made from the template: their `version` goes up and they run the new handler.",
      },
      delete: { description: "Refused with 400 while an endpoint is made from the template." },
    },
    views: [templateV2, templateV1],
  })),
  seed: async ({ templates }, { config, atField, engine: { handlers } }: SeedReach<{ storage: "atField"; config: "templates" | "defaultHandler"; engine: "handlers" }>) => {
    for (const [i, t] of config.templates.entries()) {
      if (t.handler !== undefined) await atField(`templates[${i}].handler`, () => handlers.prepare(t.handler!));
      templates.seed(t);
    }
    await atField("defaultHandler", () => handlers.prepare(config.defaultHandler));
  },
};
