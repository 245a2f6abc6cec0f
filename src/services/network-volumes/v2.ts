import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ZodError } from "zod";
import { IMMUTABLE_VOLUME_FIELDS, VOLUME_TYPES, immutableMessage, type NetworkVolume } from "./model.js";
import { invalidBody } from "../shared/invalid.js";
import { NETWORK_VOLUME_SIZE_MAX_GB, NETWORK_VOLUME_SIZE_MIN_GB } from "../../domain/limits.js";
import { validationError } from "../../http/problem.js";
import { formatIssues } from "../../http/validation-messages.js";
import { int } from "../../http/schemas.js";

export const TAG = "Network volumes";

const size = () =>
  int()
    .min(NETWORK_VOLUME_SIZE_MIN_GB)
    .max(NETWORK_VOLUME_SIZE_MAX_GB)
    .openapi({ description: `Allocated storage in GB (${NETWORK_VOLUME_SIZE_MIN_GB}..${NETWORK_VOLUME_SIZE_MAX_GB})`, example: 50 });

export const VolumeTypeSchema = z.enum(VOLUME_TYPES).openapi("VolumeType", { description: "Storage tier; set at creation and immutable" });

/** v2 NetworkVolume. */
export const NetworkVolumeSchema = z
  .object({
    id: z.string().openapi({ example: "agv6w2qcg7" }),
    name: z.string().openapi({ example: "my-dataset" }),
    size: z.int().openapi({ example: 50 }),
    dataCenter: z.string().openapi({ description: "Immutable after creation", example: "EU-RO-1" }),
    type: VolumeTypeSchema,
  })
  .openapi("NetworkVolume");

export const CreateNetworkVolumeSchema = z
  .strictObject({
    name: z.string().min(1).openapi({ example: "my-dataset" }),
    size: size(),
    dataCenter: z.string().min(1).openapi({ example: "EU-RO-1" }),
    type: VolumeTypeSchema.optional().openapi({ description: "Default STANDARD" }),
  })
  .openapi("CreateNetworkVolumeRequest");

export const UpdateNetworkVolumeSchema = z
  .strictObject({
    name: z.string().min(1).optional(),
    size: size().optional().openapi({ description: "New size in GB; at least the current size (a volume never shrinks)" }),
  })
  .refine((b) => b.name !== undefined || b.size !== undefined, { message: "expected at least one of name, size" })
  .openapi("UpdateNetworkVolumeRequest", { description: "Only the fields given change; dataCenter and type are immutable" });

/** v1 NetworkVolume: `dataCenterId` and no `type`. */
export const NetworkVolumeV1Schema = z
  .object({ id: z.string(), name: z.string(), size: z.int(), dataCenterId: z.string() })
  .openapi("NetworkVolumeV1");

export const CreateNetworkVolumeV1Schema = z
  .object({ name: z.string().min(1), size: size(), dataCenterId: z.string().min(1).openapi({ example: "EU-RO-1" }) })
  .openapi("NetworkVolumeCreateInput");

export const UpdateNetworkVolumeV1Schema = z
  .looseObject({ name: z.string().min(1).optional(), size: size().optional() })
  .openapi("NetworkVolumeUpdateInput", { description: "Only the fields given change; dataCenterId is immutable (an attempt is refused with 400)" });

export const toV2 = (v: NetworkVolume) => ({ id: v.id, name: v.name, size: v.size, dataCenter: v.dataCenter, type: v.type });
export const toV1 = (v: NetworkVolume) => ({ id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenter });

/**
 * Validation of the v2 update body: the body is closed (`additionalProperties: false`), but a
 * `dataCenter` or `type` in it is an attempt to change an immutable field and is reported as such,
 * not as an unknown property.
 */
export function updateVolumeHook(result: { target: string; success: boolean; error?: ZodError }, _c: Context): undefined {
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
