import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Pod } from "../../../domain/management/pod.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { serveResource, V1, withBody, type ResourceRoutes } from "../../resource.js";
import { resetPod, restartPod, startPod, stopPod } from "./routes.js";
import { PodCreateSchema, PodIncludeQuery, PodListQuery, PodSchema, PodUpdateSchema, TAG, type PodIncludes } from "./schemas.js";
import { toV1Pod } from "./view.js";

const query = <T>(c: { req: { valid: unknown } }) => (c.req.valid as (t: "query") => T | undefined)("query") ?? ({} as T);

/** Pods: CRUD on `/v1/pods[/{podId}]`, and the v1 lifecycle actions. */
export const podsResource: ResourceRoutes<Pod> = {
  tag: TAG,
  noun: "pod",
  list: (core) => core.pods.list(),
  get: (core, id) => core.pods.get(id),
  delete: (core, id) => core.pods.delete(id),
  docs: { delete: { summary: "Terminate a pod", description: "The pod is gone (404 afterwards); its billing history stays." } },
  views: [
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

export function podRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const { pods } = core;
  serveResource(core, router, podsResource);
  router.openapi(startPod, (c) => c.json(toV1Pod(core, pods.start(c.req.valid("param").podId)), 200));
  router.openapi(stopPod, (c) => c.json(toV1Pod(core, pods.stop(c.req.valid("param").podId)), 200));
  router.openapi(resetPod, (c) => c.json(toV1Pod(core, pods.reset(c.req.valid("param").podId)), 200));
  router.openapi(restartPod, (c) => c.json(toV1Pod(core, pods.restart(c.req.valid("param").podId)), 200));
}
