import type { ServiceRoute } from "./surfaces.js";

/** Which endpoint and operation a service request addresses, as fault rules and the journal name them. */
export interface RouteInfo {
  endpoint: string | undefined;
  /** Queue and worker routes: `run`, `status`, ...; REST: the resource (`network-volumes`, `endpoints`, ...). */
  operation: string | undefined;
}

export function routeInfo(path: string, route: ServiceRoute): RouteInfo {
  if (route.surface !== "rest") return { endpoint: route.endpointId, operation: route.operation };
  return { endpoint: undefined, operation: path.split("/")[2] || undefined };
}
