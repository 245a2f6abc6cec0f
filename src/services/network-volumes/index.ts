import { newResourceId } from "../../domain/ids.js";
import { configVolumeId } from "./config.js";
import { networkVolumesGraphQL } from "./graphql.js";
import type { ServiceDef } from "../shared/service.js";
import { NetworkVolumeService, type NetworkVolume } from "./model.js";
import { resource, serveResource } from "../shared/rest.js";
import { networkVolumeV1 } from "./v1.js";
import { networkVolumeV2 } from "./v2.js";

// What other services use of this one.
export { type NetworkVolumeService } from "./model.js";

/** Network volumes on both REST versions, over one model. */
const rest = resource((core) => core.networkVolumes, {
  tag: "Network volumes",
  noun: "network volume",
  docs: { delete: { description: "Refused with 400 while an endpoint uses the volume." } },
  views: [networkVolumeV2, networkVolumeV1],
});

const collections = { v1: ["networkvolumes"], v2: ["network-volumes"] } as const;

/** Network volumes: `/v2/network-volumes`, `/v1/networkvolumes`, and the config's `networkVolumes`. */
export const networkVolumes: ServiceDef<"network-volumes", { networkVolumes: NetworkVolumeService }, typeof collections> = {
  name: "network-volumes",
  collections,
  graphql: networkVolumesGraphQL,
  build: (ctx) => ({
    networkVolumes: new NetworkVolumeService({
      store: ctx.documents<NetworkVolume>("network-volume"),
      clock: ctx.engine.clock,
      newId: newResourceId,
      // Endpoints are built after volumes: this runs on requests only.
      usedBy: (id) => ctx.services.endpointManager.usingVolume(id),
    }),
  }),
  routes: (app, views) => serveResource(views, app, rest),
  seed: ({ networkVolumes }, { config }) => {
    for (const v of config.networkVolumes) networkVolumes.seed({ ...v, id: configVolumeId(v) });
  },
};
