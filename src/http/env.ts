import type { RouteInfo } from "./route-info.js";

/** Hono environment of the app: values middleware hands to routes. */
export interface AppEnv {
  Variables: {
    /** Wall time the request arrived, for the request log. */
    startedAt: number;
    /** The endpoint and operation the request addresses (set first, by the journal middleware). */
    route: RouteInfo;
    /** Set when a fault dropped the connection. */
    dropped: boolean;
  };
}
