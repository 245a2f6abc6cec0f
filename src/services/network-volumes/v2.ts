import { z } from "@hono/zod-openapi";
import { V2, withBody, view } from "../shared/rest.js";
import type { Context } from "hono";
import type { ZodError } from "zod";
import { IMMUTABLE_VOLUME_FIELDS, VOLUME_TYPES, immutableMessage, type NetworkVolume } from "./model.js";
import { invalidBody } from "../shared/invalid.js";
import { NETWORK_VOLUME_SIZE_MAX_GB, NETWORK_VOLUME_SIZE_MIN_GB } from "../../domain/limits.js";
import { validationError } from "../../http/problem.js";
import { formatIssues } from "../../http/validation-messages.js";
import { int } from "../../http/schemas.js";
import type { ViewContext } from "../shared/service.js";

/** A size in GB, as both versions take it. */
export const volumeSize = () =>
  int()
    .min(NETWORK_VOLUME_SIZE_MIN_GB)
    .max(NETWORK_VOLUME_SIZE_MAX_GB)
    .openapi({ description: `Allocated storage in GB (${NETWORK_VOLUME_SIZE_MIN_GB}..${NETWORK_VOLUME_SIZE_MAX_GB})`, example: 50 });

export const VolumeTypeV2Schema = z.enum(VOLUME_TYPES).openapi("VolumeType", { description: "Storage tier; set at creation and immutable" });

/** v2 NetworkVolume. */
export const NetworkVolumeV2Schema = z
  .object({
    id: z.string().openapi({ example: "agv6w2qcg7" }),
    name: z.string().openapi({ example: "my-dataset" }),
    size: z.int().openapi({ example: 50 }),
    dataCenter: z.string().openapi({ description: "Immutable after creation", example: "EU-RO-1" }),
    type: VolumeTypeV2Schema,
  })
  .openapi("NetworkVolume");

export const CreateNetworkVolumeV2Schema = z
  .strictObject({
    name: z.string().min(1).openapi({ example: "my-dataset" }),
    size: volumeSize(),
    dataCenter: z.string().min(1).openapi({ example: "EU-RO-1" }),
    type: VolumeTypeV2Schema.optional().openapi({ description: "Default STANDARD" }),
  })
  .openapi("CreateNetworkVolumeRequest");

export const UpdateNetworkVolumeV2Schema = z
  .strictObject({
    name: z.string().min(1).optional(),
    size: volumeSize().optional().openapi({ description: "New size in GB; at least the current size (a volume never shrinks)" }),
  })
  .refine((b) => b.name !== undefined || b.size !== undefined, { message: "expected at least one of name, size" })
  .openapi("UpdateNetworkVolumeRequest", { description: "Only the fields given change; dataCenter and type are immutable" });

export const toNetworkVolumeV2 = (v: NetworkVolume) => ({ id: v.id, name: v.name, size: v.size, dataCenter: v.dataCenter, type: v.type });

/**
 * Validation of the v2 update body: the body is closed (`additionalProperties: false`), but a
 * `dataCenter` or `type` in it is an attempt to change an immutable field and is reported as such,
 * not as an unknown property.
 */
function updateVolumeHook(result: { target: string; success: boolean; error?: ZodError }, _c: Context): undefined {
  if (result.success || !result.error) return undefined;
  if (result.target !== "json") throw validationError(result.error, result.target === "query" ? "query" : result.target === "param" ? "path" : "header");
  const immutable = new Set<string>(IMMUTABLE_VOLUME_FIELDS);
  const errors: string[] = [];
  const rest = result.error.issues.flatMap((issue) => {
    if (issue.code !== "unrecognized_keys" || issue.path.length > 0) return [issue];
    for (const key of issue.keys.filter((k) => immutable.has(k))) errors.push(`$.${key}: ${immutableMessage(key)}`);
    const unknown = issue.keys.filter((k) => !immutable.has(k));
    return unknown.length ? [{ ...issue, keys: unknown }] : [];
  });
  throw invalidBody([...errors, ...formatIssues(rest, "body")]);
}

/** `/v2/network-volumes`: `dataCenter` and `type`. */
export const networkVolumeV2 = view<NetworkVolume, Pick<ViewContext, "networkVolumes">>(V2, "network-volumes", "NetworkVolume", NetworkVolumeV2Schema, (_core, v) => toNetworkVolumeV2(v), {
  create: withBody(CreateNetworkVolumeV2Schema, (core, body) => core.networkVolumes.create(body)),
  update: withBody(UpdateNetworkVolumeV2Schema, (core, body, _c, id) => core.networkVolumes.update(id, body), updateVolumeHook),
  docs: {
    update: {
      summary: "Rename or grow a network volume",
      description: "Only `name` and `size` change (at least one). The size may only grow; `dataCenter` and `type` are immutable: an attempt is refused with 400.",
    },
  },
});
