import { documentsOf, type ServiceDef, type BuildReach } from "../shared/service.js";
import { ClusterService, type Cluster } from "./model.js";
import { resource, serveResource } from "../shared/rest.js";
import { clusterPodRoutes, clusterV2, TAG } from "./v2.js";
import type { ViewContext } from "../shared/service.js";

const collections = { v2: ["clusters"] } as const;

/** Clusters of pods (`/v2/clusters`): a cluster's pods are managed through it. */
export const clusters: ServiceDef<"clusters", { clusters: ClusterService }, typeof collections> = {
  name: "clusters",
  collections,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock"; services: "pods" }>) => ({
    clusters: new ClusterService({ ...documentsOf<Cluster>(ctx, "cluster"), pods: ctx.services.pods }),
  }),
  routes: (app, views) => {
    // Clusters on v2 (v1 has none).
    serveResource(views, app, resource(TAG, "cluster", (core: Pick<ViewContext, "clusters">) => core.clusters, { views: [clusterV2] }));
    clusterPodRoutes(views, app);
  },
};
