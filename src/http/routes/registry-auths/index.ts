import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { createRegistryAuth, deleteRegistryAuth, getRegistryAuth, listRegistryAuths } from "./routes.js";

/** Container registry auths of the v1 management surface (`/v1/containerregistryauth`). */
export function registryAuthRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const auths = core.registryAuths;

  router.openapi(listRegistryAuths, (c) => c.json(auths.list(), 200));
  router.openapi(createRegistryAuth, (c) => c.json(auths.create(c.req.valid("json")), 200));
  router.openapi(getRegistryAuth, (c) => c.json(auths.get(c.req.valid("param").containerRegistryAuthId), 200));
  router.openapi(deleteRegistryAuth, (c) => {
    auths.delete(c.req.valid("param").containerRegistryAuthId);
    return c.body(null, 204);
  });
}
