import { newResourceId } from "../../domain/ids.js";
import type { ServiceDef } from "../shared/service.js";
import { ClusterService, type Cluster } from "./model.js";
import { clusterRoutes } from "./v2.js";

const collections = { v2: ["clusters"] } as const;

/** Clusters of pods (`/v2/clusters`): a cluster's pods are managed through it. */
export const clusters: ServiceDef<"clusters", { clusters: ClusterService }, typeof collections> = {
  name: "clusters",
  collections,
  build: (ctx) => ({
    clusters: new ClusterService({ store: ctx.documents<Cluster>("cluster"), pods: ctx.services.pods, clock: ctx.engine.clock, newId: newResourceId }),
  }),
  routes: (app, views) => clusterRoutes(views, app),
};
