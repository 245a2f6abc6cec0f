import { getRequestListener } from "@hono/node-server";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "../domain/logger.js";
import type { App } from "./app.js";
import type { Core } from "./core.js";
import { crossOriginGuard } from "./cross-origin.js";
import { HostCheck, hostGuard } from "./host-check.js";
import { endpointOfHost, routeLoadBalancing } from "./load-balancer/host-route.js";
import { loadBalancerUpgrade } from "./load-balancer/upgrade.js";

export interface PipelineOptions {
  /** The address minipod listens on. */
  host: string;
  /** `allowedHosts`, the option's merged with the config's. */
  allowed: readonly string[] | "all";
  log: Logger;
}

/** What minipod's socket hands its requests and upgrades to. */
export interface Pipeline {
  request(req: IncomingMessage, res: ServerResponse): void;
  /** False when nothing took the upgrade: the caller refuses it. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
}

/**
 * The one request pipeline of minipod's socket, in order:
 *
 * 1. the Host allow-list (host-check.ts): a foreign Host is refused before anything reads it;
 * 2. writes from browser pages of other origins (cross-origin.ts);
 * 3. a load-balancing endpoint reached by host name takes the path form (`/lb/{endpoint_id}/...`);
 * 4. the route table (route-table.ts): a route with a fast entry answers from node's request,
 *    any other through Hono (@hono/node-server); either way behind the one gate (gate.ts: the
 *    log line, the journal, faults, authentication, limits), then the route.
 *
 * This is the only place node's requests are dispatched (test/architecture.test.ts).
 */
export function requestPipeline(app: App, core: Core, options: PipelineOptions): Pipeline {
  // `{endpoint_id}.localhost` names a load-balancing endpoint: its requests take the path form.
  const hosts = { bound: options.host, allowed: options.allowed, dynamic: (name: string) => endpointOfHost(name, core.endpoints) !== undefined };
  const refused = hostGuard(hosts, options.log);
  const foreign = crossOriginGuard(options.log);
  const hono = getRequestListener(app.fetch, { hostname: options.host });
  // WebSocket upgrades to load-balancing endpoints go to the worker's server.
  const upgradeHosts = new HostCheck(hosts);
  const upgrade = loadBalancerUpgrade(core);
  return {
    request(req, res) {
      if (refused(req, res) || foreign(req, res)) return;
      routeLoadBalancing(req, core.endpoints);
      if (!app.table.take(req, res)) void hono(req, res);
    },
    upgrade(req, socket, head) {
      routeLoadBalancing(req, core.endpoints);
      return upgradeHosts.allows(req.headers.host) && upgrade(req, socket, head);
    },
  };
}
