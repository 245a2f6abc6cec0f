import { RecentPathsRouter } from "./router.js";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { CheckedOpenAPIHono } from "./checked-routes.js";
import type { Context, ErrorHandler } from "hono";
import type { Router } from "hono/router";
import type { H, RouterRoute } from "hono/types";
import { chain, type Link } from "./chain.js";
import { EmulatorError } from "../domain/errors.js";
import { controlAuth } from "./control-auth.js";
import { sameOriginOnly } from "./cross-origin.js";
import type { Core } from "./core.js";
import type { AppEnv } from "./env.js";
import { allowedMethods } from "./method-not-allowed.js";
import { FastRoute } from "./fast-routes.js";
import { Gate, serviceAdmission } from "./gate.js";
import { honoGate } from "./hono-exchange.js";
import { RouteTable } from "./route-table.js";
import { RequestJournal } from "./journal.js";
import { serveOpenApi } from "./openapi.js";
import { problemResponse, validationError } from "./problem.js";
import { dashboardRoutes } from "./dashboard/index.js";
import { controlRoutes } from "./routes/control/index.js";
import { docsRoutes } from "./routes/control/docs.js";
import { graphqlRoutes } from "./routes/graphql/index.js";
import { graphqlExplorerRoutes } from "./routes/graphql/explorer.js";
import { endpointControlRoutes } from "./routes/control/endpoints.js";
import { feedControlRoutes } from "./routes/control/feed.js";
import { workerControlRoutes } from "./routes/control/workers.js";
import { jobControlRoutes } from "./routes/control/jobs.js";
import { queueRoutes } from "./routes/queue/index.js";
import { requestsRoutes } from "./routes/queue/request-listing.js";
import { openAiRoutes } from "./routes/openai/index.js";
import { workerRoutes } from "./routes/worker/index.js";
import { loadBalancerRoutes } from "./load-balancer/routes.js";
import { loadBalancerControlRoutes } from "./load-balancer/control.js";
import { LoadBalancerRelay } from "./load-balancer/relay.js";

export interface AppInfo {
  version: string;
  /** Guards /_emulator/* when set (config `controlKey`). */
  controlKey?: string | undefined;
}

/** The app, and its route table, whose fast entries answer some routes from node's request (see `RouteTable`). */
export type App = OpenAPIHono<AppEnv> & { table: RouteTable };

/**
 * What the app reads of the emulator: its own few members, and what each part it mounts takes
 * (each part's signature says which members of `Core` it reaches).
 */
type AppCore = Pick<Core, "failures" | "bodies" | "observe" | "clock" | "journalMax" | "journalBodyBytes" | "faults" | "mountServices"> &
  ConstructorParameters<typeof Gate>[0] &
  Parameters<typeof serviceAdmission>[0] &
  ConstructorParameters<typeof FastRoute>[0] &
  ConstructorParameters<typeof LoadBalancerRelay>[0] &
  Parameters<typeof workerRoutes>[0] &
  Parameters<typeof queueRoutes>[0] &
  Parameters<typeof requestsRoutes>[0] &
  Parameters<typeof openAiRoutes>[0] &
  Parameters<typeof loadBalancerRoutes>[0] &
  Parameters<typeof controlRoutes>[0] &
  Parameters<typeof endpointControlRoutes>[0] &
  Parameters<typeof jobControlRoutes>[0] &
  Parameters<typeof feedControlRoutes>[0] &
  Parameters<typeof workerControlRoutes>[0] &
  Parameters<typeof loadBalancerControlRoutes>[0] &
  Parameters<typeof dashboardRoutes>[0] &
  Parameters<typeof graphqlRoutes>[0];

/**
 * The whole HTTP surface. Every route is declared with `createRoute`, so `/openapi.json`
 * documents all of it; every error, unknown routes included, is problem+json.
 */
export function createApp(core: AppCore, info: AppInfo): App {
  const onError = (err: Error, c: Context<AppEnv>): Response => {
    core.failures.failed(c.req.method, c.req.path, err);
    return problemResponse(c, err);
  };
  // The handlers matched for a request (the gate, a guard, the route) run as one link, which
  // answers without a promise when none of them waits: see chain.ts.
  const router = new RecentPathsRouter<[Link, RouterRoute]>((matched) => [chain(matched.map(([h]) => h), onError as ErrorHandler), matched[matched.length - 1]![1]]);
  const app = new CheckedOpenAPIHono<AppEnv>({
    router: router as unknown as Router<[H, RouterRoute]>,
    bodies: core.bodies,
    onInvalid: (result) => {
      if (!result.success && result.error) throw validationError(result.error, targetName(result.target));
    },
  });

  // The request log, the journal, injected faults, authentication and limits, for every route of
  // the table, fast entries included: see gate.ts.
  const journal = new RequestJournal(core.observe, core.clock, core.journalMax, core.journalBodyBytes);
  const gate = new Gate(core, journal, serviceAdmission(core));
  const gateStep = honoGate(gate, onError);
  app.use(gateStep);
  // Routes with a fast entry: offered a request the router sends to them behind the gate alone.
  const table = new RouteTable(core.faults, gateStep, (method, path) => router.matchesOf(method, path) as never, (segment) => router.paramOnly(segment));
  // Pages of other origins neither drive nor read the emulator's own surface (see cross-origin.ts).
  app.use("/_emulator/*", sameOriginOnly({ jsonWrites: true }));
  app.use("/_dashboard/*", sameOriginOnly());
  app.use("/", sameOriginOnly({ navigable: true }));
  app.use("/_emulator/*", controlAuth(info.controlKey));
  app.use("/_dashboard/*", controlAuth(info.controlKey));
  app.use("/", controlAuth(info.controlKey, true));

  // The REST resources before the queue: /v2/templates/{id} is not an endpoint's operation.
  core.mountServices(app);
  for (const route of [...workerRoutes(core, app), ...queueRoutes(core, app)]) table.add(route.config.method, route.config.path, new FastRoute(core, gate, route));
  requestsRoutes(core, app);
  openAiRoutes(core, app);
  const relay = new LoadBalancerRelay(core, gate);
  for (const route of loadBalancerRoutes(core, app)) table.add(route.method, route.path, relay);
  controlRoutes(core, app);
  endpointControlRoutes(core, app);
  jobControlRoutes(core, app);
  feedControlRoutes(core, app);
  workerControlRoutes(core, app);
  loadBalancerControlRoutes(core, app);
  dashboardRoutes(core, app, info);
  docsRoutes(app);
  graphqlRoutes(core, app);
  graphqlExplorerRoutes(app);

  serveOpenApi(app, info.version);

  const allowed = allowedMethods(app.routes);
  app.notFound((c) => {
    const allow = allowed(c.req.path);
    if (allow.length > 0) {
      c.header("allow", allow.join(", "));
      return problemResponse(c, new EmulatorError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${c.req.path}; it accepts ${allow.join(", ")}`));
    }
    return problemResponse(c, new EmulatorError("ROUTE_NOT_FOUND", `no route for ${c.req.method} ${new URL(c.req.url).pathname}; see /openapi.json for every route`));
  });
  app.onError(onError);

  return Object.assign(app, { table });
}

function targetName(target: string): "body" | "query" | "path" | "header" {
  if (target === "query") return "query";
  if (target === "param") return "path";
  if (target === "header") return "header";
  return "body";
}
