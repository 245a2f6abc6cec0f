import { documentsOf, type ServiceDef, type BuildReach } from "../shared/service.js";
import { flashAppsGraphQL } from "./graphql.js";
import { FlashAppService, type FlashApp } from "./model.js";

// What other services use of this one.
export { type FlashAppService } from "./model.js";

const collections = { v2: [] } as const;

/** Flash apps (GraphQL only): what `flash deploy` and `rp flash deploy` deploy into. */
export const flashApps: ServiceDef<"flash-apps", { flashApps: FlashAppService }, typeof collections> = {
  name: "flash-apps",
  collections,
  graphql: flashAppsGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock"; services: "flashEnvironments" | "flashBuilds" }>) => ({
    flashApps: new FlashAppService({
      ...documentsOf<FlashApp>(ctx, "flash-app"),
      // Environments and builds are built after apps: this runs on requests only.
      forget: (appId) => {
        ctx.services.flashEnvironments.forgetApp(appId);
        ctx.services.flashBuilds.forgetApp(appId);
      },
    }),
  }),
};
