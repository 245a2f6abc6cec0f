import type { OpenAPIHono } from "@hono/zod-openapi";
import type { NetworkVolume } from "./model.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { serveResource, V1, V2, withBody, type ResourceRoutes } from "../shared/rest.js";
import {
  CreateNetworkVolumeSchema,
  CreateNetworkVolumeV1Schema,
  NetworkVolumeSchema,
  NetworkVolumeV1Schema,
  TAG,
  toV1,
  toV2,
  UpdateNetworkVolumeSchema,
  UpdateNetworkVolumeV1Schema,
  updateVolumeHook,
} from "./v2.js";

const v1Names = { dataCenter: "dataCenterId" };
const names = { one: "NetworkVolume", many: "NetworkVolumes" };

/**
 * Network volumes on both REST versions, over one service: `/v2/network-volumes` (`dataCenter`,
 * `type`) and `/v1/networkvolumes` (`dataCenterId`, bare-array list).
 */
export const networkVolumesResource: ResourceRoutes<NetworkVolume> = {
  tag: TAG,
  noun: "network volume",
  list: (core) => core.networkVolumes.list(),
  get: (core, id) => core.networkVolumes.get(id),
  delete: (core, id) => core.networkVolumes.delete(id),
  docs: { delete: { description: "Refused with 400 while an endpoint uses the volume." } },
  views: [
    {
      version: V2,
      path: "network-volumes",
      names,
      listKey: "networkVolumes",
      schema: NetworkVolumeSchema,
      show: (_core, v) => toV2(v),
      create: withBody(CreateNetworkVolumeSchema, (core, body) => core.networkVolumes.create(body)),
      update: withBody(UpdateNetworkVolumeSchema, (core, body, _c, id) => core.networkVolumes.update(id, body), updateVolumeHook),
      docs: {
        update: {
          summary: "Rename or grow a network volume",
          description: "Only `name` and `size` change (at least one). The size may only grow; `dataCenter` and `type` are immutable: an attempt is refused with 400.",
        },
      },
    },
    {
      version: V1,
      path: "networkvolumes",
      idParam: "networkVolumeId",
      names,
      schema: NetworkVolumeV1Schema,
      show: (_core, v) => toV1(v),
      create: withBody(CreateNetworkVolumeV1Schema, (core, { name, size, dataCenterId }) => core.networkVolumes.create({ name, size, dataCenter: dataCenterId }, v1Names)),
      // The v1 body is open, so a dataCenterId or type in it reaches the domain, which refuses them.
      update: withBody(UpdateNetworkVolumeV1Schema, (core, body, _c, id) => {
        const { name, size, dataCenterId, type } = body as { name?: string; size?: number; dataCenterId?: unknown; type?: unknown };
        return core.networkVolumes.update(id, { name, size, dataCenter: dataCenterId, type }, v1Names);
      }),
      docs: {
        update: { summary: "Rename or grow a network volume (v1)", description: "Only `name` and `size` change. The size may only grow; `dataCenterId` is immutable: an attempt is refused with 400." },
      },
    },
  ],
};

export function networkVolumeRoutes(core: ViewContext, router: OpenAPIHono<AppEnv>): void {
  serveResource(core, router, networkVolumesResource);
}
