import { createRoute, z, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { AppEnv } from "../env.js";
import { loadBalancerServer } from "./serve.js";

const TAG = "Load balancing";

const Params = z.object({
  endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "api" }),
});

const ErrorBody = z.object({ error: z.string() }).openapi("LoadBalancerError", { description: "An answer of the load balancer itself, not the worker's" });
const error = (description: string) => ({ description, content: { "application/json": { schema: ErrorBody } } });

const HOW = [
  "A request to a load-balancing endpoint goes to one of its ready workers' HTTP servers as it came (method, path after `/lb/{endpoint_id}`, query, headers, body), and the worker's answer comes back as it is written (SSE and chunked answers stream); `http://{endpoint_id}.localhost:PORT/{path}` is the same request. Every answer names its worker in `X-Runpod-Worker-Id`; send that header back (`<id>`, `strict <id>` or `strict-resume <id>`) to pin the next request to the worker.",
  "With no ready worker with room (REQUEST_COUNT requests each), a request waits: 400 `no workers available` after 2 minutes of virtual time. A request processed longer than 5.5 minutes is cut: 524. A body above 30 MB: 413. A worker whose server answers nothing: 502.",
].join("\n\n");

const METHODS = ["get", "post", "put", "patch", "delete", "options"] as const;

/**
 * `/lb/{endpoint_id}/*`: every method and path of a load-balancing endpoint, answered by a worker
 * (see `loadBalancerServer`). Returns the routes declared, whose fast entry is the relay to worker
 * processes (relay.ts).
 */
export function loadBalancerRoutes(core: Parameters<typeof loadBalancerServer>[0], app: OpenAPIHono<AppEnv>): RouteConfig[] {
  const serve = loadBalancerServer(core);
  const declared: RouteConfig[] = [];
  for (const method of METHODS) {
    for (const [path, suffix] of [
      ["/lb/{endpoint_id}/*", ""],
      ["/lb/{endpoint_id}", "Root"],
    ] as const) {
      const route = createRoute({
        method,
        path,
        operationId: `loadBalancer${method[0]!.toUpperCase()}${method.slice(1)}${suffix}`,
        tags: [TAG],
        summary: `Any ${method.toUpperCase()} request to a load-balancing endpoint, answered by one of its workers`,
        description: HOW,
        request: { params: Params },
        responses: {
          200: { description: "The worker's answer (any status, any body)" },
          400: error("No worker became available in 2 minutes (`no workers available`), or a strictly pinned worker did not free up in 5 minutes (`timed out waiting for worker`)"),
          404: error("The strictly pinned worker is gone (`affinity_worker_gone`)"),
          413: error("The body is above 30 MB"),
          429: { description: "Over the endpoint's rate limit (`rateLimits.loadBalancer`): problem+json with `Retry-After`; every answer carries `RateLimit` and `RateLimit-Policy`" },
          502: error("The worker's server answered nothing"),
          524: error("The worker took longer than 5.5 minutes"),
        },
      });
      declared.push(route);
      app.openapi(route, async (c) => {
        // What the gate set (RateLimit) is on the answer Hono has begun, which it merges into the
        // worker's answer as that is returned; a header the worker sent itself wins, as it does
        // on the relay.
        const gate = c.res.headers;
        const answer = await serve(c, c.req.valid("param").endpoint_id);
        for (const name of [...gate.keys()]) if (answer.headers.has(name)) gate.delete(name);
        return answer as never;
      });
    }
  }
  return declared;
}
