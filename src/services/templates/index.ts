import { newResourceId } from "../../domain/ids.js";
import { templatesGraphQL } from "./graphql.js";
import type { ServiceDef } from "../shared/service.js";
import { templateRoutes } from "./rest.js";
import { TemplateService, type Template } from "./model.js";

// What other services use of this one.
export { TemplateSchema, flagQuery, toTemplateView } from "./v1.js";
export { type NewTemplate, type Template, type TemplateChange, type TemplateEvent, type TemplateService } from "./model.js";
export { TemplateV2Schema } from "./v2.js";
export { toGraphQLTemplate } from "./graphql.js";

const collections = { v1: ["templates"], v2: ["templates"] } as const;

/** Templates: `/v2/templates`, `/v1/templates`, and the config's `templates` (and `defaultHandler`). */
export const templates: ServiceDef<"templates", { templates: TemplateService }, typeof collections> = {
  name: "templates",
  collections,
  graphql: templatesGraphQL,
  build: (ctx) => ({
    templates: new TemplateService({
      store: ctx.documents<Template>("template"),
      clock: ctx.engine.clock,
      newId: newResourceId,
      handlerNames: () => ctx.engine.handlers.names(),
      // Endpoints are built after templates: this runs on requests only.
      usedBy: (id) => ctx.services.endpointManager.usingTemplate(id),
    }),
  }),
  routes: (app, views) => templateRoutes(views, app),
  seed: async ({ templates }, { config, atField, engine: { handlers } }) => {
    for (const [i, t] of config.templates.entries()) {
      if (t.handler !== undefined) await atField(`templates[${i}].handler`, () => handlers.prepare(t.handler!));
      templates.seed(t);
    }
    await atField("defaultHandler", () => handlers.prepare(config.defaultHandler));
  },
};
