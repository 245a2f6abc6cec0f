import { z } from "@hono/zod-openapi";
import type { NetworkVolume } from "./model.js";
import { V1, withBody, view } from "../shared/rest.js";
import { volumeSize } from "./v2.js";
import type { ViewContext } from "../shared/service.js";

/** v1 NetworkVolume: `dataCenterId` and no `type`. */
export const NetworkVolumeV1Schema = z
  .object({ id: z.string(), name: z.string(), size: z.int(), dataCenterId: z.string() })
  .openapi("NetworkVolumeV1");

export const CreateNetworkVolumeV1Schema = z
  .object({ name: z.string().min(1), size: volumeSize(), dataCenterId: z.string().min(1).openapi({ example: "EU-RO-1" }) })
  .openapi("NetworkVolumeCreateInput");

export const UpdateNetworkVolumeV1Schema = z
  .looseObject({ name: z.string().min(1).optional(), size: volumeSize().optional() })
  .openapi("NetworkVolumeUpdateInput", { description: "Only the fields given change; dataCenterId is immutable (an attempt is refused with 400)" });

export const toNetworkVolumeV1 = (v: NetworkVolume) => ({ id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenter });

const v1Names = { dataCenter: "dataCenterId" };

/** `/v1/networkvolumes`: `dataCenterId`, bare-array lists. */
export const networkVolumeV1 = view<NetworkVolume, Pick<ViewContext, "networkVolumes">>(V1, "networkvolumes", "NetworkVolume", NetworkVolumeV1Schema, (_core, v) => toNetworkVolumeV1(v), {
  create: withBody(CreateNetworkVolumeV1Schema, (core, { name, size, dataCenterId }) => core.networkVolumes.create({ name, size, dataCenter: dataCenterId }, v1Names)),
  // The v1 body is open, so a dataCenterId or type in it reaches the domain, which refuses them.
  update: withBody(UpdateNetworkVolumeV1Schema, (core, body, _c, id) => {
    const { name, size, dataCenterId, type } = body as { name?: string; size?: number; dataCenterId?: unknown; type?: unknown };
    return core.networkVolumes.update(id, { name, size, dataCenter: dataCenterId, type }, v1Names);
  }),
  docs: {
    update: { summary: "Rename or grow a network volume (v1)", description: "Only `name` and `size` change. The size may only grow; `dataCenterId` is immutable: an attempt is refused with 400." },
  },
});
