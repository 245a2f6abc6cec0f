import { z } from "@hono/zod-openapi";
import { PERSISTENT_MOUNT_MIN_GB } from "../../domain/limits.js";
import { int } from "../../http/schemas.js";

/**
 * Pieces the v2 surface shares between templates, pods and endpoints: the container settings
 * (`ContainerConfig` of the service's v2 description) and mounts.
 */

const CUDA = /^\d+\.\d+$/;
export const cudaVersion = () => z.string().regex(CUDA, "expected a CUDA version as major.minor, such as 12.8");

/** `ContainerConfig` request fields. */
export const containerRequest = {
  args: z.string().openapi({ description: "Arguments passed to the container entrypoint (v1: dockerStartCmd, split at spaces)" }),
  disk: int().min(1).openapi({ description: "Container disk in GB" }),
  env: z.record(z.string(), z.string()),
  image: z.string().min(1).openapi({ example: "runpod/worker-v1-vllm:stable" }),
  ports: z.array(z.string()).openapi({ example: ["8888/http", "22/tcp"] }),
  registry: z.string().min(1).nullable().openapi({ description: "Container registry credential id (v1: containerRegistryAuthId); null for none" }),
};

/** `ContainerConfig` request fields, each optional (updates, and creates from a template). */
export const optionalContainerRequest = {
  args: containerRequest.args.optional(),
  disk: containerRequest.disk.optional(),
  env: containerRequest.env.optional(),
  image: containerRequest.image.optional(),
  ports: containerRequest.ports.optional(),
  registry: containerRequest.registry.optional(),
};

/** `ContainerConfig` response fields. */
export const containerResponse = {
  args: z.string(),
  disk: z.int(),
  env: z.record(z.string(), z.string()),
  image: z.string(),
  ports: z.array(z.string()),
  registry: z.string().nullable(),
};

export const PersistentMountSchema = z
  .strictObject({ size: int().min(PERSISTENT_MOUNT_MIN_GB).openapi({ description: "GB (v1: volumeInGb)" }), path: z.string().min(1).openapi({ example: "/workspace" }) })
  .openapi("PersistentMount");
export const NetworkMountSchema = z.strictObject({ volumeId: z.string().min(1), path: z.string().min(1).openapi({ example: "/runpod-volume" }) }).openapi("NetworkMount");
export const TemplateMountsSchema = z.strictObject({ persistent: PersistentMountSchema.optional() }).openapi("TemplateMounts");
export const MountsSchema = z.strictObject({ persistent: PersistentMountSchema.optional(), network: z.array(NetworkMountSchema).max(1).optional() }).openapi("Mounts");

/** A v2 body's container settings in the model's (v1's) names; what the body leaves out stays undefined. */
export function containerFromV2(b: {
  image?: string | undefined;
  args?: string | undefined;
  disk?: number | undefined;
  ports?: string[] | undefined;
  env?: Record<string, string> | undefined;
  registry?: string | null | undefined;
}) {
  return {
    imageName: b.image,
    dockerStartCmd: b.args === undefined ? undefined : cmdOf(b.args),
    containerDiskInGb: b.disk,
    ports: b.ports,
    env: b.env,
    containerRegistryAuthId: b.registry,
  };
}

/** v2 `args` as v1's `dockerStartCmd`: split at single spaces, so joining gives the string back. */
export const cmdOf = (args: string): string[] => (args === "" ? [] : args.split(" "));
export const argsOf = (cmd: readonly string[]): string => cmd.join(" ");

/** The v1 persistent volume as a v2 mount: none below the minimum size (0 is none). */
export const persistentMount = (sizeGb: number, path: string) => (sizeGb >= PERSISTENT_MOUNT_MIN_GB ? { persistent: { size: sizeGb, path } } : {});

/** A stored time (epoch ms) as RFC 3339. */
export const iso = (ms: number): string => new Date(ms).toISOString();
