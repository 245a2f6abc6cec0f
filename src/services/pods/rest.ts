import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Pod } from "./record.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { serveResource, V1, V2, withBody, type ResourceRoutes } from "../shared/rest.js";
import { podV2Routes, resetPod, restartPod, startPod, stopPod } from "./actions.js";
import { CreatePodV2Schema, ListPodsV2Query, PodV2Schema, UpdatePodV2Schema, podCreateFromV2, podUpdateFromV2, toPodV2 } from "./v2.js";
import { PodCreateSchema, PodIncludeQuery, PodListQuery, PodSchema, PodUpdateSchema, TAG, type PodIncludes, toV1Pod } from "./v1.js";

const query = <T>(c: { req: { valid: unknown } }) => (c.req.valid as (t: "query") => T | undefined)("query") ?? ({} as T);

/** Pods: `/v2/pods[/{id}]` and `/v1/pods[/{podId}]`, with each version's lifecycle actions. */
export const podsResource: ResourceRoutes<Pod> = {
  tag: TAG,
  noun: "pod",
  list: (core) => core.pods.list(),
  get: (core, id) => core.pods.get(id),
  delete: (core, id) => core.pods.delete(id),
  docs: { delete: { summary: "Terminate a pod", description: "The pod is gone (404 afterwards); its billing history stays." } },
  views: [
    {
      version: V2,
      path: "pods",
      names: { one: "Pod", many: "Pods" },
      listKey: "pods",
      schema: PodV2Schema,
      query: { list: ListPodsV2Query },
      list: (core, c) => core.pods.list({ excludeClusterPods: query<{ includeClusterPods?: boolean }>(c).includeClusterPods !== true }),
      show: (core, p) => toPodV2(core, p),
      create: withBody(CreatePodV2Schema, (core, body) => core.pods.create(podCreateFromV2(body))),
      update: withBody(UpdatePodV2Schema, (core, body, _c, id) => core.pods.update(id, podUpdateFromV2(body, core.pods.get(id)))),
      docs: {
        list: { description: "The account's pods; the pods of clusters only with includeClusterPods=true." },
        create: {
          description:
            "The pod is RUNNING at once (nothing is provisioned) and bills from now on: one GPU type (gpu.id) or a CPU flavor (cpu). A templateId's settings apply once, under the body's; the pod keeps no link to it.",
        },
        update: { description: "Only the fields given change; a change beyond name and locked restarts a running pod's container. A mount keeps the kind it had at creation." },
        delete: { description: "The pod is gone (404 afterwards); its billing history stays." },
      },
    },
    {
      version: V1,
      path: "pods",
      idParam: "podId",
      names: { one: "Pod", many: "Pods" },
      schema: PodSchema,
      createStatus: 201,
      query: { list: PodListQuery, get: PodIncludeQuery },
      list: (core, c) => core.pods.list(query(c)),
      get: (core, id, c) => core.pods.get(id, query<PodIncludes>(c).includeWorkers),
      show: (core, p, c) => toV1Pod(core, p, query<PodIncludes>(c)),
      create: withBody(PodCreateSchema, (core, body) => core.pods.create(body)),
      update: withBody(PodUpdateSchema, (core, body, _c, id) => core.pods.update(id, body)),
      docs: {
        list: { description: "Filters combine; list filters take repeated or comma-separated values. Serverless workers are listed only with includeWorkers=true." },
        create: { description: "The pod is RUNNING at once and bills from now on. It gets the first of gpuTypeIds (or cpuFlavorIds), and the attached network volume's data center." },
        update: { description: "Changes beyond name and locked reset a running pod: lastStartedAt moves to now." },
      },
    },
  ],
};

export function podRoutes(core: ViewContext, router: OpenAPIHono<AppEnv>): void {
  const { pods } = core;
  serveResource(core, router, podsResource);
  podV2Routes(core, router);
  router.openapi(startPod, (c) => c.json(toV1Pod(core, pods.start(c.req.valid("param").podId)), 200));
  router.openapi(stopPod, (c) => c.json(toV1Pod(core, pods.stop(c.req.valid("param").podId)), 200));
  router.openapi(resetPod, (c) => c.json(toV1Pod(core, pods.reset(c.req.valid("param").podId)), 200));
  router.openapi(restartPod, (c) => c.json(toV1Pod(core, pods.restart(c.req.valid("param").podId)), 200));
}
