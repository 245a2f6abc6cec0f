import { NETWORK_VOLUMES_CONFIG } from "./config.js";
import { configVolumeId } from "../shared/config-id.js";
import { networkVolumesGraphQL } from "./graphql.js";
import { documentsOf, type ServiceDef, type BuildReach, type SeedReach } from "../shared/service.js";
import { NetworkVolumeService, type NetworkVolume } from "./model.js";
import { resource, serveResource } from "../shared/rest.js";
import { networkVolumeV1 } from "./v1.js";
import { networkVolumeV2 } from "./v2.js";
import type { ViewContext } from "../shared/service.js";

// What other services use of this one.
export { type NetworkVolumeService } from "./model.js";

const collections = { v1: ["networkvolumes"], v2: ["network-volumes"] } as const;

/** Network volumes: `/v2/network-volumes`, `/v1/networkvolumes`, and the config's `networkVolumes`. */
export const networkVolumes: ServiceDef<"network-volumes", { networkVolumes: NetworkVolumeService }, typeof collections, typeof NETWORK_VOLUMES_CONFIG> = {
  name: "network-volumes",
  config: NETWORK_VOLUMES_CONFIG,
  collections,
  graphql: networkVolumesGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock"; services: "endpointManager" }>) => ({
    networkVolumes: new NetworkVolumeService({
      ...documentsOf<NetworkVolume>(ctx, "network-volume"),
      // Endpoints are built after volumes: this runs on requests only.
      usedBy: (id) => ctx.services.endpointManager.usingVolume(id),
    }),
  }),
  // Network volumes on both REST versions, over one model.
  routes: (app, views) => serveResource(views, app, resource("Network volumes", "network volume", (core: Pick<ViewContext, "networkVolumes">) => core.networkVolumes, {
    docs: { delete: { description: "Refused with 400 while an endpoint uses the volume." } },
    views: [networkVolumeV2, networkVolumeV1],
  })),
  seed: ({ networkVolumes }, { config }: SeedReach<{ config: "networkVolumes" }>) => {
    for (const v of config.networkVolumes) networkVolumes.seed({ ...v, id: configVolumeId(v) });
  },
};
