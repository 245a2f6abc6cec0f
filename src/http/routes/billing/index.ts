import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { endpointBilling, networkVolumeBilling, podBilling } from "./routes.js";

const iso = <T extends { time: number }>(r: T): Omit<T, "time"> & { time: string } => ({ ...r, time: new Date(r.time).toISOString() });

/** Billing history of the v1 management surface (`/v1/billing/...`), computed from recorded usage. */
export function billingRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const { billing } = core;
  router.openapi(podBilling, (c) => c.json(billing.pods(c.req.valid("query")).map(iso), 200));
  router.openapi(endpointBilling, (c) => c.json(billing.endpoints(c.req.valid("query")).map(iso), 200));
  router.openapi(networkVolumeBilling, (c) => c.json(billing.networkVolumes(c.req.valid("query")).map(iso), 200));
}
