import { newResourceId } from "../../domain/ids.js";
import type { ServiceDef } from "../shared/service.js";
import { ClusterService, type Cluster } from "./model.js";
import { resource, serveResource } from "../shared/rest.js";
import { clusterPodRoutes, clusterV2, TAG } from "./v2.js";

/** Clusters on v2 (v1 has none). */
const rest = resource((core) => core.clusters, {
  tag: TAG,
  noun: "cluster",
  docs: {
    create: {
      description:
        "Makes `compute.podCount` GPU pods of one shape in one data center, RUNNING at once and billed as the cluster (GET /v2/billing/clusters). Their pods are managed through the cluster only (409 on the pod routes).",
    },
    update: { summary: "Rename a cluster", description: "Only the name changes." },
    delete: { description: "Terminates every pod of the cluster." },
  },
  views: [clusterV2],
});

const collections = { v2: ["clusters"] } as const;

/** Clusters of pods (`/v2/clusters`): a cluster's pods are managed through it. */
export const clusters: ServiceDef<"clusters", { clusters: ClusterService }, typeof collections> = {
  name: "clusters",
  collections,
  build: (ctx) => ({
    clusters: new ClusterService({ store: ctx.documents<Cluster>("cluster"), pods: ctx.services.pods, clock: ctx.engine.clock, newId: newResourceId }),
  }),
  routes: (app, views) => {
    serveResource(views, app, rest);
    clusterPodRoutes(views, app);
  },
};
