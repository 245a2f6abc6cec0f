import { classifyServiceRoute } from "../domain/surfaces.js";

/** Which endpoint and operation a request addresses, as fault rules and the journal name them. */
export interface RouteInfo {
  service: boolean;
  endpoint: string | undefined;
  /** Queue and worker routes: `run`, `status`, ...; REST: the resource (`network-volumes`, `endpoints`, ...). */
  operation: string | undefined;
}

/** Classifies a path once per request; emulator-only paths (control, docs, dashboard) are not service routes. */
export function routeInfo(method: string, path: string): RouteInfo {
  if (!path.startsWith("/v1/") && !path.startsWith("/v2/")) return { service: false, endpoint: undefined, operation: undefined };
  const r = classifyServiceRoute(method, path);
  if (r.surface !== "rest") return { service: true, endpoint: r.endpointId, operation: r.operation };
  return { service: true, endpoint: undefined, operation: path.split("/")[2] || undefined };
}
