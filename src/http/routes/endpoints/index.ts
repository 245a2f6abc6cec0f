import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, updateEndpoint, updateEndpointByPost } from "./routes.js";
import { toEndpointView, type EndpointIncludes } from "./view.js";

const includes = (q: { includeTemplate?: "true" | "false" | undefined; includeWorkers?: "true" | "false" | undefined }): EndpointIncludes => ({
  includeTemplate: q.includeTemplate === "true",
  includeWorkers: q.includeWorkers === "true",
});

/** Endpoints of the v1 management surface: `/v1/endpoints[/{endpointId}[/update]]`. */
export function endpointRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const manager = core.endpointManager;

  router.openapi(listEndpoints, (c) => {
    const inc = includes(c.req.valid("query"));
    return c.json(manager.list().map((e) => toEndpointView(core, e, inc)), 200);
  });
  router.openapi(createEndpoint, async (c) => c.json(toEndpointView(core, await manager.create(c.req.valid("json"))), 200));
  router.openapi(getEndpoint, (c) => c.json(toEndpointView(core, manager.get(c.req.valid("param").endpointId), includes(c.req.valid("query"))), 200));
  router.openapi(updateEndpoint, async (c) => c.json(toEndpointView(core, await manager.update(c.req.valid("param").endpointId, c.req.valid("json"))), 200));
  router.openapi(updateEndpointByPost, async (c) => c.json(toEndpointView(core, await manager.update(c.req.valid("param").endpointId, c.req.valid("json"))), 200));
  router.openapi(deleteEndpoint, (c) => {
    manager.delete(c.req.valid("param").endpointId);
    return c.body(null, 204);
  });
}
