import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { cpuFromV1, type CpuSelection } from "./record.js";
import type { ManagedEndpoint } from "./model.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { serveResource, V1, V2, withBody, type ResourceRoutes } from "../shared/rest.js";
import { serverlessV2Routes } from "./workers.js";
import { CreateEndpointV2Schema, EndpointV2Schema, UpdateEndpointV2Schema, endpointChangeFromV2, newEndpointFromV2, toEndpointV2 } from "./v2.js";
import { flagQuery } from "../templates/index.js";
import { invalidBody } from "../shared/invalid.js";
import { CreateEndpointSchema, EndpointSchema, TAG, UpdateEndpointSchema, toEndpointView, type EndpointIncludes } from "./v1.js";

const IncludesQuery = z.object({
  includeTemplate: flagQuery("includeTemplate", "Include the endpoint's template"),
  includeWorkers: flagQuery("includeWorkers", "Include the endpoint's simulated workers"),
});

const includes = (q: { includeTemplate?: "true" | "false" | undefined; includeWorkers?: "true" | "false" | undefined } | undefined): EndpointIncludes => ({
  includeTemplate: q?.includeTemplate === "true",
  includeWorkers: q?.includeWorkers === "true",
});

/** A v1 body in the model's terms: flashboot a mode, the CPU flavors and vCPU count as CPU selections. */
function fromV1<B extends { flashboot?: boolean | undefined; cpuFlavorIds?: string[] | undefined; vcpuCount?: number | undefined }>(body: B, currentCpu: CpuSelection[] | undefined) {
  const { flashboot, cpuFlavorIds, vcpuCount, ...rest } = body;
  return {
    ...rest,
    ...(flashboot === undefined ? {} : { flashboot: flashboot ? ("FLASHBOOT" as const) : ("OFF" as const) }),
    ...(cpuFlavorIds === undefined && vcpuCount === undefined ? {} : { cpu: cpuFromV1(cpuFlavorIds, vcpuCount, currentCpu) }),
  };
}

/**
 * Serverless endpoints: `/v2/serverless[/{id}]` and `/v1/endpoints[/{endpointId}[/update]]`. On v2
 * an endpoint carries its container settings itself: they live in a template of its own.
 */
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
      version: V2,
      path: "serverless",
      names: { one: "Endpoint", many: "Endpoints" },
      listKey: "endpoints",
      schema: EndpointV2Schema,
      show: (core, e, c) => toEndpointV2(core, e, c),
      create: withBody(CreateEndpointV2Schema, (core, body) => {
        const { input, container } = newEndpointFromV2(body);
        return core.endpointManager.create(input, container);
      }),
      update: withBody(UpdateEndpointV2Schema, (core, body, _c, id) => {
        const { change, container } = endpointChangeFromV2(body, core.endpointManager.get(id));
        return core.endpointManager.update(id, change, container);
      }),
      docs: {
        create: {
          description:
            "The endpoint serves the queue under /v2/{id} at once, on simulated workers (its minimum start cold, 1 s). Its container settings (image, env, ...) go to a template of its own, copied from templateId if given; its handler is that template's, else the config's defaultHandler.",
        },
        update: {
          description:
            "Only the fields given change. workers, scaling and timeout reach the simulated workers at once; a change of the container settings (image, env, ...) is a new release (see /releases).",
        },
        delete: { description: "Its workers stop, its jobs are forgotten (held requests on them answer 404) and its own template goes with it." },
      },
    },
    {
      version: V1,
      path: "endpoints",
      idParam: "endpointId",
      names: { one: "Endpoint", many: "Endpoints" },
      schema: EndpointSchema,
      query: { list: IncludesQuery, get: IncludesQuery },
      show: (core, e, c) => toEndpointView(core, e, includes((c.req.valid as (t: "query") => z.infer<typeof IncludesQuery> | undefined)("query"))),
      create: withBody(CreateEndpointSchema, (core, body) => core.endpointManager.create(fromV1(body, undefined))),
      update: withBody(UpdateEndpointSchema, (core, body, _c, id) => {
        const { type, ...change } = body;
        if (type !== undefined && (type === "LOAD_BALANCER") !== (core.endpointManager.get(id).spec.type === "LOAD_BALANCER")) {
          throw invalidBody(["$.type: an endpoint's type cannot change; create another endpoint of the other type"]);
        }
        return core.endpointManager.update(id, fromV1(change, core.endpointManager.get(id).fields.cpu));
      }),
    },
  ],
};

export function endpointRoutes(core: ViewContext, router: OpenAPIHono<AppEnv>): void {
  serveResource(core, router, endpointsResource);
  serverlessV2Routes(core, router);
}
