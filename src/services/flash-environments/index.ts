import { EmulatorError } from "../../domain/errors.js";
import { DEPLOYED_APPS_ID } from "../../domain/load-balancer/types.js";
import { forwardedEnv } from "../../http/env.js";
import { documentsOf, type ServiceDef, type BuildReach } from "../shared/service.js";
import { flashEnvironmentsGraphQL } from "./graphql.js";
import { FlashEnvironmentService, type FlashEnvironment } from "./model.js";

// What other services use of this one.
export { type FlashEnvironmentService } from "./model.js";

// `/v2/flash/...` stays a queue path (the queue's scopes and the key's checks), answered by this
// service's route before the queue's.
const collections = { v2: [] } as const;

/** The endpoint id the clients send a deployed app's calls to. */
const SENTINEL = DEPLOYED_APPS_ID;

/** The headers a call of a deployed app names its endpoint with (runpod-flash and the SDK 2.x). */
const FLASH_HEADERS = ["x-flash-app", "x-flash-environment", "x-flash-endpoint"] as const;

/**
 * Flash environments (GraphQL), and the calls of deployed apps: a request to `/v2/flash/{operation}`
 * with `X-Flash-App`, `X-Flash-Environment` and `X-Flash-Endpoint` is the same request to
 * `/v2/{endpoint_id}/{operation}` of the environment's endpoint of that name, passed through the
 * app again to the queue's route (the gate passed once: as the client called, its log line,
 * faults and authentication; as passed on, the endpoint's queue limits and the journal's entry); `/lb/flash/{path}` (and so `flash.localhost`) the
 * same to `/lb/{endpoint_id}/{path}`, a load-balancing endpoint's. Without any of the headers, an endpoint whose id
 * is `flash` (declared in the config) gets the request as any other endpoint would.
 */
export const flashEnvironments: ServiceDef<"flash-environments", { flashEnvironments: FlashEnvironmentService }, typeof collections> = {
  name: "flash-environments",
  collections,
  graphql: flashEnvironmentsGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock"; services: "flashApps" | "flashBuilds" | "endpointManager" }>) => ({
    flashEnvironments: new FlashEnvironmentService({
      ...documentsOf<FlashEnvironment>(ctx, "flash-environment"),
      // Apps, builds and endpoints are other services': read on requests only.
      app: (appId) => ctx.services.flashApps.get(appId),
      appByName: (name) => ctx.services.flashApps.byName(name),
      buildApp: (buildId) => ctx.services.flashBuilds.get(buildId).appId,
      buildObjectKey: (buildId) => ctx.services.flashBuilds.get(buildId).objectKey,
      endpoints: () => ctx.services.endpointManager.list().map((e) => ({ id: e.spec.id, name: e.spec.name, flashEnvironmentId: e.fields.flashEnvironmentId })),
      deleteEndpoint: (id) => ctx.services.endpointManager.delete(id),
    }),
  }),
  routes: (app, { flashEnvironments, endpoints }) => {
    // The queue's operations, and a deployed `@app.api` class's routes (the SDK 2.x calls them at
    // `https://flash.{host}/...`, which minipod serves as `/lb/flash/...`).
    for (const surface of ["v2", "lb"] as const) {
      app.all(`/${surface}/${SENTINEL}/*`, (c, next) => {
        const [appName, envName, endpoint] = FLASH_HEADERS.map((h) => c.req.header(h));
        if (!appName && !envName && !endpoint && endpoints.has(SENTINEL)) return next();
        if (!appName || !envName || !endpoint) {
          throw new EmulatorError("BAD_REQUEST", `a call of a deployed Flash app names its endpoint with the headers ${FLASH_HEADERS.join(", ")}; missing: ${FLASH_HEADERS.filter((h) => !c.req.header(h)).join(", ")}`);
        }
        const id = flashEnvironments.resolve(appName, envName, endpoint);
        const url = new URL(c.req.url);
        url.pathname = `/${surface}/${encodeURIComponent(id)}/${url.pathname.slice(`/${surface}/${SENTINEL}/`.length)}`;
        const raw = c.req.raw;
        const body = raw.method === "GET" || raw.method === "HEAD" ? undefined : raw.body;
        // Journalled once: as the request passed on (the endpoint it went to, its body, its answer), under the path the client called.
        c.set("forwarded", true);
        return app.fetch(new Request(url, { method: raw.method, headers: raw.headers, body, duplex: "half" } as RequestInit), forwardedEnv(c.env, c.req.path));
      });
    }
  },
};
