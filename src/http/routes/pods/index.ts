import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { createPod, deletePod, getPod, listPods, resetPod, restartPod, startPod, stopPod, updatePod, updatePodPost } from "./routes.js";
import { toV1Pod } from "./view.js";

/** Pods of the v1 management surface (`/v1/pods`): CRUD and the lifecycle actions. */
export function podRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const { pods } = core;

  router.openapi(listPods, (c) => {
    const q = c.req.valid("query");
    return c.json(pods.list(q).map((p) => toV1Pod(core, p, q)), 200);
  });

  router.openapi(createPod, (c) => c.json(toV1Pod(core, pods.create(c.req.valid("json"))), 201));

  router.openapi(getPod, (c) => {
    const q = c.req.valid("query");
    return c.json(toV1Pod(core, pods.get(c.req.valid("param").podId, q.includeWorkers), q), 200);
  });

  for (const route of [updatePod, updatePodPost]) {
    router.openapi(route, (c) => c.json(toV1Pod(core, pods.update(c.req.valid("param").podId, c.req.valid("json"))), 200));
  }

  router.openapi(deletePod, (c) => {
    pods.delete(c.req.valid("param").podId);
    return c.body(null, 204);
  });

  router.openapi(startPod, (c) => c.json(toV1Pod(core, pods.start(c.req.valid("param").podId)), 200));
  router.openapi(stopPod, (c) => c.json(toV1Pod(core, pods.stop(c.req.valid("param").podId)), 200));
  router.openapi(resetPod, (c) => c.json(toV1Pod(core, pods.reset(c.req.valid("param").podId)), 200));
  router.openapi(restartPod, (c) => c.json(toV1Pod(core, pods.restart(c.req.valid("param").podId)), 200));
}
