import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { CLUSTER_CIDR, CLUSTER_TYPES, type Cluster } from "./model.js";
import { DATA_CENTER_IDS } from "../shared/catalog/catalog.js";
import { POD_STATUSES, PodV2Schema, toPodV2 } from "../pods/index.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { idParams, V2, withBody, view, routeHead } from "../shared/rest.js";
import { ERROR_RESPONSES, int, json, problem } from "../../http/schemas.js";
import { containerFromV2, iso, MountsSchema, optionalContainerRequest } from "../shared/container-v2.js";

export const TAG = "Clusters";
const route = routeHead(TAG);

const ComputeSchema = z
  .strictObject({
    gpuTypeId: z.string().min(1).openapi({ example: "NVIDIA H100 80GB HBM3" }),
    gpuCountPerPod: int().min(1),
    podCount: int().min(2).max(250),
  })
  .openapi("ClusterCompute");

const { registry: _registry, ...container } = optionalContainerRequest;
const CreateClusterV2Schema = z
  .strictObject({
    ...container,
    name: z.string().min(1),
    type: z.enum(CLUSTER_TYPES),
    compute: ComputeSchema,
    dataCenterIds: z.array(z.enum(DATA_CENTER_IDS)).optional(),
    mounts: MountsSchema.optional(),
    startJupyter: z.boolean().optional(),
    startSsh: z.boolean().optional(),
  })
  .openapi("CreateClusterRequest", { description: "Every pod gets the container settings; they are RUNNING at once, in one data center" });

const UpdateClusterV2Schema = z.strictObject({ name: z.string().min(1) }).openapi("UpdateClusterRequest", { description: "A rename: nothing else of a cluster changes" });

const ClusterV2Schema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(CLUSTER_TYPES),
    compute: ComputeSchema,
    dataCenterId: z.string().optional(),
    pods: z.object({ total: z.int(), byStatus: z.record(z.string(), z.int()) }),
    network: z.object({ cidr: z.string() }),
    primary: z.object({ podId: z.string(), status: z.enum(POD_STATUSES) }).optional(),
    createdAt: z.string(),
  })
  .openapi("Cluster");

type Body = z.output<typeof CreateClusterV2Schema>;

function toClusterV2(core: Pick<ViewContext, "clusters">, c: Cluster): z.infer<typeof ClusterV2Schema> {
  const members = core.clusters.members(c.id);
  const byStatus: Record<string, number> = {};
  for (const p of members) byStatus[p.desiredStatus] = (byStatus[p.desiredStatus] ?? 0) + 1;
  const primary = members[0];
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    compute: c.compute,
    ...(primary ? { dataCenterId: primary.dataCenterId } : {}),
    pods: { total: members.length, byStatus },
    network: { cidr: CLUSTER_CIDR },
    ...(primary ? { primary: { podId: primary.id, status: primary.desiredStatus } } : {}),
    createdAt: iso(c.createdAt),
  };
}

/** A create body as what every member pod gets. */
const memberSettings = (b: Body) => {
  const persistent = b.mounts?.persistent;
  const network = b.mounts?.network?.[0];
  const { containerRegistryAuthId: _none, ...container } = containerFromV2(b);
  return {
    ...container,
    ports: b.ports ?? [],
    volumeInGb: persistent?.size ?? 0,
    volumeMountPath: persistent?.path ?? network?.path,
    networkVolumeId: network?.volumeId,
    dataCenterIds: b.dataCenterIds?.length ? b.dataCenterIds.slice(0, 1) : undefined,
    startSsh: b.startSsh,
    startJupyter: b.startJupyter,
  };
};

/** `/v2/clusters`: a cluster is shown with its pods counted by status. */
export const clusterV2 = view<Cluster, Pick<ViewContext, "clusters">>(V2, "clusters", "Cluster", ClusterV2Schema, toClusterV2, {
  create: withBody(CreateClusterV2Schema, (core, b) => core.clusters.create({ name: b.name, type: b.type, compute: b.compute, pod: memberSettings(b) })),
  update: withBody(UpdateClusterV2Schema, (core, b, _c, id) => core.clusters.rename(id, b.name)),
  docs: {
    create: {
      description:
        "Makes `compute.podCount` GPU pods of one shape in one data center, RUNNING at once and billed as the cluster (GET /v2/billing/clusters). Their pods are managed through the cluster only (409 on the pod routes).",
    },
    update: { summary: "Rename a cluster", description: "Only the name changes." },
    delete: { description: "Terminates every pod of the cluster." },
  },
});

const podsRoute = createRoute({
  ...route("get", "/v2/clusters/{id}/pods", "listClusterPods", "List a cluster's pods"),
  request: { params: idParams("id") },
  responses: { 200: json(z.object({ pods: z.array(PodV2Schema) }), "Its pods, by rank"), ...ERROR_RESPONSES, 404: problem("No cluster with this id") },
});

/** `GET /v2/clusters/{id}/pods`. */
export function clusterPodRoutes(core: Pick<ViewContext, "clusters" | "pods" | "clock">, router: OpenAPIHono<AppEnv>): void {
  router.openapi(podsRoute, (c) => c.json({ pods: core.clusters.members(c.req.valid("param").id).map((p) => toPodV2(core, p)) }, 200));
}
