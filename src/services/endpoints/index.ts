import { ENDPOINTS_CONFIG } from "./config.js";
import type { EndpointSpec } from "../../domain/endpoint.js";
import { INLINE_PREFIX } from "../../domain/handlers/types.js";
import { newResourceId } from "../../domain/ids.js";
import { BUILTIN_IMAGES, imageRuleFor } from "../../domain/images.js";
import { EXTERNAL_HANDLER } from "../../domain/external-workers.js";
import { ENDPOINT_SCALER_VALUE_DEFAULT } from "../../domain/limits.js";
import { endpointsGraphQL } from "./graphql.js";
import type { ServiceDef, BuildReach, SeedReach, EngineView, ViewContext } from "../shared/service.js";
import { EndpointManager } from "./model.js";
import { externalWorkerReader, type ExternalWorkerReader } from "./workers.js";
import { ReleaseLog, type Release } from "./releases.js";
import { resource, serveResource } from "../shared/rest.js";
import { endpointV1, TAG } from "./v1.js";
import { endpointFieldsV2, endpointV2 } from "./v2.js";
import { serverlessV2Routes } from "./workers.js";

// What other services use of this one.
export { ENDPOINT_VCPU_COUNT_DEFAULT, endpointFields } from "./record.js";

/**
 * An endpoint as GET /v2/serverless/{id} shows it, but its env, which may hold secrets, and its
 * request URLs: the dashboard's card shows these fields, so a field added to the v2 view appears there too.
 */
export function endpointShown(views: Pick<ViewContext, "endpoints" | "endpointManager">, id: string): Record<string, unknown> | undefined {
  if (!views.endpoints.of(id)) return undefined;
  const { env: _secrets, ...shown } = endpointFieldsV2(views, views.endpointManager.get(id));
  return shown;
}

const collections = { v1: ["endpoints"], v2: ["serverless"] } as const;

/**
 * Serverless endpoints as resources: `/v2/serverless`, `/v1/endpoints`, their workers, releases
 * and logs, over the endpoints the job engine serves; and the config's `endpoints`.
 */
export const endpoints: ServiceDef<"endpoints", { endpointManager: EndpointManager; externalWorkers: ExternalWorkerReader }, typeof collections, typeof ENDPOINTS_CONFIG> = {
  name: "endpoints",
  config: ENDPOINTS_CONFIG,
  collections,
  graphql: endpointsGraphQL,
  build: (
    ctx: BuildReach<{
      storage: "documents";
      config: "defaultHandler" | "images";
      engine: "clock" | "endpoints" | "scheduler" | "handlers" | "jobs" | "notifier" | "workerProtocol";
      services: "templates" | "networkVolumes";
    }>,
  ) => {
    const { engine, services } = ctx;
    const releases = new ReleaseLog({ store: ctx.documents<Release>("release"), newId: newResourceId });
    const endpointManager = new EndpointManager({
      releases,
      store: engine.endpoints.stored,
      clock: engine.clock,
      newId: newResourceId,
      runtime: engine.scheduler,
      templates: services.templates,
      volumes: services.networkVolumes,
      handlers: engine.handlers,
      jobs: engine.jobs,
      notifier: engine.notifier,
      defaultHandler: ctx.config.defaultHandler,
      imageHandler: (image) => (imageRuleFor([...ctx.config.images, ...BUILTIN_IMAGES], image) ? EXTERNAL_HANDLER : undefined),
    });
    return { endpointManager, externalWorkers: externalWorkerReader(engine.workerProtocol) };
  },
  routes: (app, views) => {
    // Serverless endpoints on both REST versions, and their workers, releases and logs on v2.
    serveResource(views, app, resource(TAG, "endpoint", (core: Pick<ViewContext, "endpointManager">) => core.endpointManager, { views: [endpointV2, endpointV1] }));
    serverlessV2Routes(views, app);
  },
  seed: async ({ endpointManager }, { config, atField, engine }: SeedReach<{ storage: "atField"; config: "endpoints"; engine: "clock" | "endpoints" | "handlers" | "log" }>) => {
    const { handlers } = engine;
    const endpoints = engine.endpoints.stored;
    const now = engine.clock.now();
    for (const [i, e] of config.endpoints.entries()) {
      // A handler inherited from a template or defaultHandler was prepared, under its own field.
      await atField(`endpoints[${i}].handler`, () => handlers.prepare(e.handler));
      const existing = endpoints.get(e.id);
      const extra = endpointManager.configExtra(e, existing);
      // A load-balancing endpoint scales on requests in flight (REQUEST_COUNT), as the service's do.
      if (e.type === "LOAD_BALANCER") Object.assign(extra, { scalerType: "REQUEST_COUNT", scalerValue: e.requestCount ?? ENDPOINT_SCALER_VALUE_DEFAULT });
      endpoints.save({
        id: e.id,
        ...(e.type === "LOAD_BALANCER" ? { type: e.type } : {}),
        name: e.name ?? e.id,
        handler: e.handler,
        workersMin: e.workersMin,
        workersMax: e.workersMax,
        idleTimeout: e.idleTimeout,
        coldStartMs: e.coldStartMs,
        executionTimeoutMs: e.executionTimeoutMs,
        ...(e.batchWorkersMax === undefined ? {} : { batchWorkersMax: e.batchWorkersMax }),
        createdAt: existing?.createdAt ?? now,
        extra,
      });
    }
    const configured = new Set(config.endpoints.map((e) => e.id));
    for (const spec of endpoints.list()) {
      if (!configured.has(spec.id)) await prepareStored(spec, engine);
    }
  },
};

/**
 * An endpoint of the database (made through the API, or imported) whose handler cannot be
 * prepared here does not stop the start: its jobs fail, saying why.
 */
async function prepareStored(spec: EndpointSpec, { handlers, log }: Pick<EngineView, "handlers" | "log">): Promise<void> {
  try {
    await handlers.prepare(spec.handler);
  } catch (e) {
    const name = typeof spec.handler === "string" ? spec.handler : spec.handler.url;
    const reason = name.startsWith(INLINE_PREFIX)
      ? `handler "${name}" of endpoint "${spec.id}" was a function given in code to the emulator that made this endpoint, and functions are not stored; give the endpoint a handler in the config, or pass one as createEmulator({ handlers: { "${name}": fn } })`
      : `handler "${name}" of endpoint "${spec.id}" cannot be used: ${(e as Error).message}`;
    handlers.unavailable(spec.handler, reason);
    log.warn(`${reason}; its jobs will fail until then`);
  }
}
