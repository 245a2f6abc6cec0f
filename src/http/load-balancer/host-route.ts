import type { IncomingMessage } from "node:http";
import type { EndpointRegistry } from "../../domain/endpoint-registry.js";
import { DEPLOYED_APPS_ID, LB_PATH_PREFIX } from "../../domain/load-balancer/types.js";
import { resolvedLbTarget } from "./worker-path.js";

/**
 * The host names under which each load-balancing endpoint is reached by host, `{endpoint_id}.{parent}`:
 * the parents are `localhost` (which curl and browsers resolve to loopback), minipod's loopback
 * addresses and bound address (`{endpoint_id}.127.0.0.1`, the name the service's Python SDKs make
 * from a base URL of `http://127.0.0.1:PORT/v2`), and the names of `allowedHosts`, as the service's
 * `{endpoint_id}.api.runpod.ai`. One pattern, made at start: a request naming none (most name
 * 127.0.0.1 or localhost) leaves at its first characters.
 */
export function lbHostPattern(bound: string, allowed: readonly string[] | "all"): RegExp {
  const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const exact = new Set(["localhost", "127.0.0.1"]);
  const domains: string[] = [];
  const host = bound.toLowerCase();
  if (!/^(?:0\.0\.0\.0|::|\[::\]|)$/.test(host) && !host.includes(":")) exact.add(host);
  for (const name of allowed === "all" ? [] : allowed) {
    if (name.startsWith(".")) domains.push(name.slice(1));
    else if (!name.startsWith("[")) exact.add(name);
  }
  const parents = [...[...exact].map(escape), ...domains.map((d) => `(?:[^.:\\s]+\\.)*${escape(d)}`)];
  return new RegExp(`^([^.:\\s\\[\\]/@]+)\\.(?:${parents.join("|")})(?::\\d{1,5})?\\s*$`, "i");
}

/**
 * The load-balancing endpoint a Host header names (`{endpoint_id}.{parent}[:port]`, `pattern` from
 * `lbHostPattern`), or undefined. Host names are case-insensitive; endpoint ids are matched so.
 * `flash.{parent}` is always taken: a deployed app's call, passed on by its `X-Flash-*` headers.
 */
export function endpointOfHost(header: string | undefined, endpoints: Pick<EndpointRegistry, "specs">, pattern: RegExp): string | undefined {
  if (header === undefined) return undefined;
  const label = pattern.exec(header)?.[1]?.toLowerCase();
  if (label === undefined) return undefined;
  return endpoints.specs("LOAD_BALANCER").find((s) => s.id.toLowerCase() === label)?.id ?? (label === DEPLOYED_APPS_ID ? DEPLOYED_APPS_ID : undefined);
}

/**
 * The node listener's step for load-balancing endpoints, before anything reads the path: a request
 * by host, `GET /ping` with `Host: api.localhost:8080`, becomes `GET /lb/api/ping`, so
 * authentication, faults, the journal and the route see one form; then the path after the
 * endpoint's id has its dot segments resolved (`resolvedLbTarget`), so that the relay, the app
 * and a WebSocket upgrade send the worker the same path.
 */
export function routeLoadBalancing(req: IncomingMessage, endpoints: Pick<EndpointRegistry, "specs">, pattern: RegExp): void {
  const id = endpointOfHost(req.headers.host, endpoints, pattern);
  let url = req.url ?? "/";
  // The absolute form (`GET http://host/lb/api//x`): what it names is its path, read as any path is.
  const absolute = ABSOLUTE_FORM.exec(url);
  if (absolute !== null && (id !== undefined || url.startsWith(`${LB_PATH_PREFIX}/`, absolute[0].length))) url = url.slice(absolute[0].length) || "/";
  if (id !== undefined) {
    url = `${LB_PATH_PREFIX}/${id}${url.startsWith("/") ? url : `/${url}`}`;
    // `{id}.127.0.0.1` is no name a URL may hold (WHATWG reads a last label of digits as an address):
    // the request goes on as `{id}.localhost`, the same endpoint by a name a handler's Request can carry.
    const under = UNDER_ADDRESS.exec(req.headers.host!);
    if (under) req.headers.host = `${id.toLowerCase()}.localhost${under[1] ?? ""}`;
  }
  req.url = resolvedLbTarget(url);
}

/** A Host naming a load-balancing endpoint under an IPv4 address, with its port. */
const UNDER_ADDRESS = /\.\d+(:\d+)?\s*$/;

/** A request target in absolute form: its scheme and authority. */
const ABSOLUTE_FORM = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i;
