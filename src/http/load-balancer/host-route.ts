import type { IncomingMessage } from "node:http";
import type { EndpointRegistry } from "../../domain/endpoint-registry.js";
import { LB_PATH_PREFIX } from "../../domain/load-balancer/types.js";
import { hostName } from "../host-check.js";
import { resolvedLbTarget } from "./worker-path.js";

/** The name under which each load-balancing endpoint is reached by host: `{endpoint_id}.localhost`. */
export const LB_HOST_SUFFIX = ".localhost";
const BY_HOST = /\.localhost(?::\d*)?\s*$/i;

/**
 * The load-balancing endpoint a Host header names (`{endpoint_id}.localhost[:port]`, which curl and
 * browsers resolve to loopback, as the service's `{endpoint_id}.api.runpod.ai`), or undefined.
 * Host names are case-insensitive; endpoint ids are matched so.
 */
export function endpointOfHost(header: string | undefined, endpoints: Pick<EndpointRegistry, "specs">): string | undefined {
  // Every request passes here: most name 127.0.0.1 or localhost, and leave at this first test.
  if (header === undefined || !BY_HOST.test(header)) return undefined;
  const name = hostName(header);
  if (name === undefined || !name.endsWith(LB_HOST_SUFFIX)) return undefined;
  const label = name.slice(0, -LB_HOST_SUFFIX.length);
  if (label === "" || label.includes(".")) return undefined;
  return endpoints.specs("LOAD_BALANCER").find((s) => s.id.toLowerCase() === label)?.id;
}

/**
 * The node listener's step for load-balancing endpoints, before anything reads the path: a request
 * by host, `GET /ping` with `Host: api.localhost:8080`, becomes `GET /lb/api/ping`, so
 * authentication, faults, the journal and the route see one form; then the path after the
 * endpoint's id has its dot segments resolved (`resolvedLbTarget`), so that the relay, the app
 * and a WebSocket upgrade send the worker the same path.
 */
export function routeLoadBalancing(req: IncomingMessage, endpoints: Pick<EndpointRegistry, "specs">): void {
  const id = endpointOfHost(req.headers.host, endpoints);
  let url = req.url ?? "/";
  // The absolute form (`GET http://host/lb/api//x`): what it names is its path, read as any path is.
  const absolute = ABSOLUTE_FORM.exec(url);
  if (absolute !== null && (id !== undefined || url.startsWith(`${LB_PATH_PREFIX}/`, absolute[0].length))) url = url.slice(absolute[0].length) || "/";
  if (id !== undefined) url = `${LB_PATH_PREFIX}/${id}${url.startsWith("/") ? url : `/${url}`}`;
  req.url = resolvedLbTarget(url);
}

/** A request target in absolute form: its scheme and authority. */
const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i;
