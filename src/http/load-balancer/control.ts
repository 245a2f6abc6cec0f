import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { EmulatorError } from "../../domain/errors.js";
import { LB_HEALTH_PATH_DEFAULT } from "../../domain/limits.js";
import type { LbWorker } from "../../domain/load-balancer/types.js";
import { jsonBody } from "../body.js";
import type { Core } from "../core.js";
import type { AppEnv } from "../env.js";
import { ERROR_RESPONSES, NO_PARAMETERS_LIMIT, ok } from "../schemas.js";
import { loadBalancerLauncherRoute } from "./launcher.js";

const TAG = "Emulator control";

const LbWorkerSchema = z
  .object({
    id: z.string(),
    kind: z.enum(["simulated", "process"]).openapi({ description: "`simulated`: made in minipod's process (a function or a built-in handler); `process`: an HTTP server of its own, health-checked" }),
    state: z.enum(["initializing", "ready", "unhealthy"]).openapi({ description: "As its health check says: 204 initializing, 200 ready, anything else unhealthy (out of the pool)" }),
    inFlight: z.int(),
    served: z.int(),
    createdAt: z.int().openapi({ description: "Virtual epoch ms" }),
    coldStartMs: z.int().optional().openapi({ description: "From its first 204 to its first 200 (virtual ms)" }),
    url: z.string().optional().openapi({ description: "Process workers: where its server listens" }),
  })
  .openapi("LoadBalancerWorker");

const StatusSchema = z.object({
  workers: z.object({ initializing: z.int(), ready: z.int(), unhealthy: z.int(), idle: z.int(), running: z.int() }),
  requests: z.object({ inFlight: z.int(), waiting: z.int(), served: z.int() }),
});

const LoadBalancersSchema = z
  .object({ endpoints: z.array(z.object({ id: z.string(), handler: z.string(), status: StatusSchema, workers: z.array(LbWorkerSchema) })) })
  .openapi("LoadBalancers");

const Params = z.object({ endpoint_id: z.string().openapi({ param: { name: "endpoint_id", in: "path" } }) });
const WorkerParams = Params.extend({ worker_id: z.string().openapi({ param: { name: "worker_id", in: "path" } }) });

const list = createRoute({
  method: "get",
  path: "/_emulator/load-balancers",
  operationId: "listLoadBalancers",
  tags: [TAG],
  summary: "Load-balancing endpoints: their workers and requests",
  responses: ok(LoadBalancersSchema, "Every load-balancing endpoint"),
});

const register = createRoute({
  method: "post",
  path: "/_emulator/load-balancers/{endpoint_id}/workers",
  operationId: "registerLoadBalancerWorker",
  tags: [TAG],
  summary: "A worker process of a load-balancing endpoint starts listening",
  description:
    'What `minipod worker` calls for each process it starts on an endpoint with `"handler": "external"`: the worker\'s server is on 127.0.0.1 at `port`, its health check at `healthPort` (default `port`) and `healthPath` (default /ping). minipod checks its health from then on and routes requests to it once it answers 200.',
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: {
    params: Params,
    body: {
      required: true,
      content: {
        "application/json": {
          schema: z.strictObject({
            workerId: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/),
            port: z.int().min(1).max(65535),
            healthPort: z.int().min(1).max(65535).optional(),
            healthPath: z.string().startsWith("/").max(500).optional(),
          }),
        },
      },
    },
  },
  responses: { ...ok(LbWorkerSchema, "The worker"), 404: ERROR_RESPONSES[404] },
});

const exited = createRoute({
  method: "post",
  path: "/_emulator/load-balancers/{endpoint_id}/workers/{worker_id}/exited",
  operationId: "loadBalancerWorkerExited",
  tags: [TAG],
  summary: "A worker process of a load-balancing endpoint exited",
  description: "It is out of the pool at once (unhealthy); `stopped: true` (it will not come back) removes it, so requests pinned to it strictly answer 404.",
  middleware: [jsonBody(NO_PARAMETERS_LIMIT)] as const,
  request: {
    params: WorkerParams,
    body: { required: false, content: { "application/json": { schema: z.strictObject({ reason: z.string().max(500).optional(), stopped: z.boolean().optional() }) } } },
  },
  responses: { ...ok(z.object({ id: z.string(), removed: z.boolean() }), "Done"), 404: ERROR_RESPONSES[404] },
});

/** A worker as the control API shows it. */
export function lbWorkerView(w: LbWorker): z.infer<typeof LbWorkerSchema> {
  return {
    id: w.id,
    kind: w.kind,
    state: w.state,
    inFlight: w.inFlight,
    served: w.served,
    createdAt: w.createdAt,
    ...(w.readyAt !== undefined && w.initializingAt !== undefined ? { coldStartMs: w.readyAt - w.initializingAt } : {}),
    ...(w.target ? { url: w.target.url } : {}),
  };
}

/** The control routes of load-balancing endpoints: their state, worker processes joining and leaving, and their launcher. */
export function loadBalancerControlRoutes(core: Pick<Core, "endpoints" | "loadBalancers" | "ownAddress" | "notifier">, app: OpenAPIHono<AppEnv>): void {
  const lb = core.loadBalancers;
  app.openapi(list, (c) =>
    c.json(
      {
        endpoints: core.endpoints
          .specs("LOAD_BALANCER")
          .map((s) => ({ id: s.id, handler: typeof s.handler === "string" ? s.handler : s.handler.url, status: lb.status(s.id)!, workers: lb.workers(s.id).map(lbWorkerView) })),
      },
      200,
    ),
  );
  app.openapi(register, (c) => {
    const { endpoint_id } = c.req.valid("param");
    const b = c.req.valid("json");
    // A worker on minipod's own port would have minipod relay requests, and its health checks, to itself.
    for (const port of [b.port, b.healthPort ?? b.port]) {
      const refusal = core.ownAddress.refusal("127.0.0.1", port);
      if (refusal) throw new EmulatorError("BAD_REQUEST", `a worker's server cannot be at port ${port}: ${refusal}`);
    }
    const url = `http://127.0.0.1:${b.port}`;
    const healthUrl = `http://127.0.0.1:${b.healthPort ?? b.port}${b.healthPath ?? LB_HEALTH_PATH_DEFAULT}`;
    if (!lb.register(endpoint_id, b.workerId, { url, healthUrl })) {
      throw new EmulatorError("NOT_FOUND", `endpoint "${endpoint_id}" is not a load-balancing endpoint served by worker processes; give it "type": "LOAD_BALANCER" and "handler": "external"`);
    }
    return c.json(lbWorkerView(lb.workers(endpoint_id).find((w) => w.id === b.workerId)!), 200);
  });
  app.openapi(exited, (c) => {
    const { endpoint_id, worker_id } = c.req.valid("param");
    if (!lb.workers(endpoint_id).some((w) => w.id === worker_id)) throw new EmulatorError("NOT_FOUND", `no worker "${worker_id}" on load-balancing endpoint "${endpoint_id}"`);
    const body = (c.req.valid("json") ?? {}) as { stopped?: boolean };
    if (body.stopped) lb.remove(endpoint_id, worker_id);
    else lb.health(endpoint_id, worker_id, "unhealthy");
    return c.json({ id: worker_id, removed: body.stopped === true }, 200);
  });
  loadBalancerLauncherRoute(core, app);
}
