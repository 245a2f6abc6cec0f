import { catalogGraphQL } from "./graphql.js";
import { CATALOG_CONFIG, type HubListingConfig } from "./config.js";
import type { ServiceDef, BuildReach } from "../shared/service.js";
import { catalogRoutes } from "./v2.js";

const collections = { v2: ["catalog"] } as const;

/** The catalog (`/v2/catalog`): GPU types, CPU flavors, data centers and their availability, with the prices in effect. */
export const catalog: ServiceDef<"catalog", { hub: readonly HubListingConfig[] }, typeof collections, typeof CATALOG_CONFIG> = {
  name: "catalog",
  config: CATALOG_CONFIG,
  collections,
  graphql: catalogGraphQL,
  build: (ctx: BuildReach<{ config: "hub" }>) => ({ hub: ctx.config.hub }),
  routes: (app, views) => catalogRoutes(views, app),
};
