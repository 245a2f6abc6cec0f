import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { ManagedEndpoint } from "../../../domain/management/endpoints.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { serveResource, V1, withBody, type ResourceRoutes } from "../../resource.js";
import { flagQuery } from "../templates/schemas.js";
import { CreateEndpointSchema, EndpointSchema, TAG, UpdateEndpointSchema } from "./schemas.js";
import { toEndpointView, type EndpointIncludes } from "./view.js";

const IncludesQuery = z.object({
  includeTemplate: flagQuery("includeTemplate", "Include the endpoint's template"),
  includeWorkers: flagQuery("includeWorkers", "Include the endpoint's simulated workers"),
});

const includes = (q: { includeTemplate?: "true" | "false" | undefined; includeWorkers?: "true" | "false" | undefined } | undefined): EndpointIncludes => ({
  includeTemplate: q?.includeTemplate === "true",
  includeWorkers: q?.includeWorkers === "true",
});

/** Serverless endpoints: `/v1/endpoints[/{endpointId}[/update]]`. */
export const endpointsResource: ResourceRoutes<ManagedEndpoint> = {
  tag: TAG,
  noun: "endpoint",
  list: (core) => core.endpointManager.list(),
  get: (core, id) => core.endpointManager.get(id),
  delete: (core, id) => core.endpointManager.delete(id),
  docs: {
    create: {
      description:
        "The endpoint serves the queue operations under /v2/{id} at once, running its template's handler (or the config's defaultHandler); its minimum workers start cold. The template must be a serverless one.",
    },
    update: {
      description:
        "Only the fields given change. workersMin, workersMax and idleTimeout take effect on the simulated workers at once (idle workers over a lower maximum stop; a higher minimum starts workers); a new templateId switches the handler.",
    },
    delete: { description: "Its running handlers are stopped and its jobs forgotten; its queue operations answer 404 from then on." },
  },
  views: [
    {
      version: V1,
      path: "endpoints",
      idParam: "endpointId",
      names: { one: "Endpoint", many: "Endpoints" },
      schema: EndpointSchema,
      query: { list: IncludesQuery, get: IncludesQuery },
      show: (core, e, c) => toEndpointView(core, e, includes((c.req.valid as (t: "query") => z.infer<typeof IncludesQuery> | undefined)("query"))),
      create: withBody(CreateEndpointSchema, (core, body) => core.endpointManager.create(body)),
      update: withBody(UpdateEndpointSchema, (core, body, _c, id) => core.endpointManager.update(id, body)),
    },
  ],
};

export function endpointRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  serveResource(core, router, endpointsResource);
}
