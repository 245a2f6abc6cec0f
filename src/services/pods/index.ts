import { podsGraphQL } from "./graphql.js";
import type { ServiceDef, BuildReach, SeedReach } from "../shared/service.js";
import { configPodId, PODS_CONFIG } from "./config.js";
import type { Pod } from "./record.js";
import { PodService } from "./model.js";
import { resource, serveResource } from "../shared/rest.js";
import { podActionRoutes } from "./actions.js";
import { podV1, TAG } from "./v1.js";
import { podV2 } from "./v2.js";
import type { ViewContext } from "../shared/service.js";

// What other services use of this one.
export { CLUSTER_CIDR, CLUSTER_TYPES, type ClusterType } from "./cluster-members.js";
export { POD_STATUSES, type Pod, type PodCreate } from "./record.js";
export { type PodService } from "./model.js";
export { PodV2Schema, toPodV2 } from "./v2.js";

const collections = { v1: ["pods"], v2: ["pods"] } as const;

/** Pods (`/v2/pods`, `/v1/pods`) and their lifecycle, billed through the usage meter; the config's `pods`. */
export const pods: ServiceDef<"pods", { pods: PodService }, typeof collections, typeof PODS_CONFIG> = {
  name: "pods",
  config: PODS_CONFIG,
  collections,
  graphql: podsGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock" | "endpoints" | "logs"; services: "usage" | "prices" | "templates" | "networkVolumes" | "registryAuths" | "sshKeys" }>) => {
    const { engine, services } = ctx;
    const { usage, prices, templates, networkVolumes, registryAuths, sshKeys } = services;
    const pods = new PodService({
      clock: engine.clock,
      store: ctx.documents<Pod>("pod"),
      prices,
      usage,
      liveWorkers: () => usage.liveWorkers(),
      refs: {
        template: (id) => templates.find(id),
        networkVolume: (id) => (networkVolumes.has(id) ? { dataCenterId: networkVolumes.get(id).dataCenter } : undefined),
        registryAuthExists: (id) => registryAuths.exists(id),
        endpointName: (id) => engine.endpoints.of(id)?.name,
        sshKeys: () => sshKeys.list(),
      },
      logs: engine.logs,
    });
    return { pods };
  },
  routes: (app, views) => {
    // Pods on both REST versions, with each version's lifecycle actions beside them.
    serveResource(views, app, resource(TAG, "pod", (core: Pick<ViewContext, "pods" | "clock" | "clusters" | "endpoints" | "networkVolumes" | "templates">) => core.pods, {
      docs: { delete: { summary: "Terminate a pod", description: "The pod is gone (404 afterwards); its billing history stays." } },
      views: [podV2, podV1],
    }));
    podActionRoutes(views, app);
  },
  seed: ({ pods }, { config, atField }: SeedReach<{ storage: "atField"; config: "pods" }>) => {
    for (const [i, p] of config.pods.entries()) {
      const id = configPodId(p);
      const { id: _id, desiredStatus, ...input } = p;
      if (!pods.exists(id)) atField(`pods[${i}]`, () => pods.create(input, { id, desiredStatus }));
    }
  },
};
