import type { IncomingMessage } from "node:http";
import type { LoadBalancers } from "../../domain/load-balancer/balancer.js";
import { LB_PATH_PREFIX } from "../../domain/load-balancer/types.js";
import { hostName } from "../host-check.js";

/** The name under which each load-balancing endpoint is reached by host: `{endpoint_id}.localhost`. */
export const LB_HOST_SUFFIX = ".localhost";
const BY_HOST = /\.localhost(?::\d*)?\s*$/i;

/**
 * The load-balancing endpoint a Host header names (`{endpoint_id}.localhost[:port]`, which curl and
 * browsers resolve to loopback, as the service's `{endpoint_id}.api.runpod.ai`), or undefined.
 * Host names are case-insensitive; endpoint ids are matched so.
 */
export function endpointOfHost(header: string | undefined, loadBalancers: Pick<LoadBalancers, "specs">): string | undefined {
  // Every request passes here: most name 127.0.0.1 or localhost, and leave at this first test.
  if (header === undefined || !BY_HOST.test(header)) return undefined;
  const name = hostName(header);
  if (name === undefined || !name.endsWith(LB_HOST_SUFFIX)) return undefined;
  const label = name.slice(0, -LB_HOST_SUFFIX.length);
  if (label === "" || label.includes(".")) return undefined;
  return loadBalancers.specs().find((s) => s.id.toLowerCase() === label)?.id;
}

/**
 * The node listener's step for requests by host: `GET /ping` with `Host: api.localhost:8080`
 * becomes `GET /lb/api/ping`, so authentication, faults, the journal and the route see one form.
 * Returns whether the request was one.
 */
export function routeByHost(req: IncomingMessage, loadBalancers: Pick<LoadBalancers, "specs">): boolean {
  const id = endpointOfHost(req.headers.host, loadBalancers);
  if (id === undefined) return false;
  req.url = `${LB_PATH_PREFIX}/${id}${req.url?.startsWith("/") ? req.url : `/${req.url ?? ""}`}`;
  return true;
}
