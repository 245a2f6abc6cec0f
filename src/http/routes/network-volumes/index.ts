import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { createV1, createV2, deleteV1, deleteV2, getV1, getV2, listV1, listV2, updateV1, updateV1Post, updateV2 } from "./routes.js";
import { toV1, toV2, updateVolumeHook } from "./schemas.js";

/**
 * Network volumes on both REST versions, over one store: `/v2/network-volumes` (`dataCenter`,
 * `type`) and `/v1/networkvolumes` (`dataCenterId`, bare-array list).
 */
export function networkVolumeRoutes(core: Core, router: OpenAPIHono<AppEnv>): void {
  const volumes = core.networkVolumes;

  router.openapi(listV2, (c) => c.json({ networkVolumes: volumes.list().map(toV2) }, 200));
  router.openapi(createV2, (c) => c.json(toV2(volumes.create(c.req.valid("json"))), 201));
  router.openapi(getV2, (c) => c.json(toV2(volumes.get(c.req.valid("param").id)), 200));
  router.openapi(updateV2, (c) => c.json(toV2(volumes.update(c.req.valid("param").id, c.req.valid("json"))), 200), updateVolumeHook);
  router.openapi(deleteV2, (c) => {
    volumes.delete(c.req.valid("param").id);
    return c.body(null, 204);
  });

  const v1Names = { dataCenter: "dataCenterId" };
  router.openapi(listV1, (c) => c.json(volumes.list().map(toV1), 200));
  router.openapi(createV1, (c) => {
    const { name, size, dataCenterId } = c.req.valid("json");
    return c.json(toV1(volumes.create({ name, size, dataCenter: dataCenterId }, v1Names)), 200);
  });
  router.openapi(getV1, (c) => c.json(toV1(volumes.get(c.req.valid("param").networkVolumeId)), 200));
  const updateV1Handler = (c: Context<AppEnv>, id: string, body: Record<string, unknown>) => {
    // The v1 body is open, so a dataCenterId or type in it reaches the domain, which refuses them.
    const { name, size, dataCenterId, type } = body as { name?: string; size?: number; dataCenterId?: unknown; type?: unknown };
    return c.json(toV1(volumes.update(id, { name, size, dataCenter: dataCenterId, type }, v1Names)), 200);
  };
  router.openapi(updateV1, (c) => updateV1Handler(c, c.req.valid("param").networkVolumeId, c.req.valid("json")));
  router.openapi(updateV1Post, (c) => updateV1Handler(c, c.req.valid("param").networkVolumeId, c.req.valid("json")));
  router.openapi(deleteV1, (c) => {
    volumes.delete(c.req.valid("param").networkVolumeId);
    return c.body(null, 204);
  });
}
