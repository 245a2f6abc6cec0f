import { BILLING_CONFIG } from "./config.js";
import type { ServiceDef, BuildReach } from "../shared/service.js";
import { BillingService } from "./model.js";
import { priceList, type PriceList } from "../shared/pricing.js";
import { billingRoutes } from "./v1.js";
import { UsageMeter } from "./usage.js";

// What other services use of this one.
export { type LiveWorker, type UsageAttrs } from "./usage.js";

const collections = { v1: ["billing"], v2: ["billing"] } as const;

/**
 * Billing (`/v2/billing`, `/v1/billing`) from recorded usage: simulated workers (told by the
 * engine), pods (told by the pod service) and network volumes (their events); the prices in
 * effect (defaults and the config's `pricing`), which the catalog shows too.
 */
export const billing: ServiceDef<"billing", { billing: BillingService; prices: PriceList; usage: UsageMeter }, typeof collections, typeof BILLING_CONFIG> = {
  name: "billing",
  config: BILLING_CONFIG,
  collections,
  build: (ctx: BuildReach<{ storage: "usage"; config: "pricing"; engine: "clock" | "log" | "endpoints" | "onWorker"; services: "networkVolumes" | "templates" }>) => {
    const { engine, services } = ctx;
    const prices = priceList(ctx.config.pricing);
    const usageStore = ctx.usage;
    const usage = new UsageMeter({ store: usageStore, endpointOf: (id) => engine.endpoints.of(id), log: engine.log });
    // Worker intervals a previous process left open are closed before any new worker starts.
    const orphans = usage.closeOrphanWorkers();
    if (orphans > 0) engine.log.info(`usage: ${orphans} worker(s) of the previous run billed until they were last seen`);
    engine.onWorker((e) => usage.onWorker(e));
    services.networkVolumes.subscribe((e) => {
      if (e.kind === "deleted") usage.volumeDeleted(e.volume.id, e.at);
      else usage.volumeSized(e.volume.id, { sizeGb: e.volume.size, volumeType: e.volume.type, dataCenterId: e.volume.dataCenter }, e.at);
    });
    const templatesWithImage = (image: string) => services.templates.list().filter((t) => t.imageName === image).map((t) => t.id);
    const billing = new BillingService({ clock: engine.clock, usage: usageStore, prices, templatesWithImage });
    return { billing, prices, usage };
  },
  routes: (app, views) => billingRoutes(views, app),
  clear: ({ usage }) => usage.clear(),
  restored: ({ usage }, at) => usage.restoredAt(at),
};
