import { z } from "zod";
import { NETWORK_VOLUME_SIZE_MAX_GB, NETWORK_VOLUME_SIZE_MIN_GB } from "../../domain/limits.js";
import { VOLUME_TYPES } from "../shared/catalog/datacenter-catalog.js";
import type { ConfigPart } from "../../config/part.js";
import { configVolumeId, resourceId } from "../shared/config-id.js";

export const NetworkVolumeConfigSchema = z.strictObject({
  id: resourceId("Network volume").optional().describe("Network volume id; default: derived from name and dataCenter, the same at every start"),
  name: z.string().min(1),
  size: z.int().min(NETWORK_VOLUME_SIZE_MIN_GB).max(NETWORK_VOLUME_SIZE_MAX_GB).describe(`GB, ${NETWORK_VOLUME_SIZE_MIN_GB}..${NETWORK_VOLUME_SIZE_MAX_GB}`),
  dataCenter: z.string().min(1).describe("Data center id, e.g. EU-RO-1 (v1 calls it dataCenterId)"),
  type: z.enum(VOLUME_TYPES).default("STANDARD"),
});
export type NetworkVolumeConfig = z.infer<typeof NetworkVolumeConfigSchema>;

/** The network volumes' part of the config. */
export const NETWORK_VOLUMES_CONFIG = {
  fields: {
    networkVolumes: z.array(NetworkVolumeConfigSchema).default([]).describe("Network volumes of /v2/network-volumes and /v1/networkvolumes"),
  },
  check: checkNetworkVolumesConfig,
} satisfies ConfigPart;

/** Cross-checks: one id per volume. */
function checkNetworkVolumesConfig(config: { networkVolumes: NetworkVolumeConfig[] }, ctx: z.RefinementCtx): void {
  const volumeIds = new Set<string>();
  config.networkVolumes.forEach((v, i) => {
    const id = configVolumeId(v);
    if (volumeIds.has(id)) {
      const message = v.id ? `duplicate network volume id "${id}"` : `network volume "${v.name}" in ${v.dataCenter} is declared twice; give each an id`;
      ctx.addIssue({ code: "custom", message, path: ["networkVolumes", i, v.id ? "id" : "name"] });
    }
    volumeIds.add(id);
  });
}
