import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { createTemplate, deleteTemplate, getTemplate, listTemplates, updateTemplate, updateTemplateByPost } from "./routes.js";
import { toTemplateView } from "./schemas.js";

/** Templates of the v1 management surface: `/v1/templates[/{templateId}[/update]]`. */
export function templateRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const { templates } = core;

  router.openapi(listTemplates, (c) => c.json(templates.list().map(toTemplateView), 200));
  router.openapi(createTemplate, (c) => c.json(toTemplateView(templates.create(c.req.valid("json"))), 200));
  router.openapi(getTemplate, (c) => c.json(toTemplateView(templates.get(c.req.valid("param").templateId)), 200));
  router.openapi(updateTemplate, (c) => c.json(toTemplateView(templates.update(c.req.valid("param").templateId, c.req.valid("json"))), 200));
  router.openapi(updateTemplateByPost, (c) => c.json(toTemplateView(templates.update(c.req.valid("param").templateId, c.req.valid("json"))), 200));
  router.openapi(deleteTemplate, (c) => {
    templates.delete(c.req.valid("param").templateId);
    return c.body(null, 204);
  });
}
