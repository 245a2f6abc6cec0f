import { EmulatorError } from "../../domain/errors.js";
import { CUDA_VERSIONS } from "../shared/catalog/catalog.js";
import { invalidBody } from "../shared/invalid.js";
import type { PodCreate, PodUpdate } from "./record.js";
import type { Template } from "../templates/index.js";

/**
 * How a pod's create or update body is completed before it is applied: settings from a template
 * (v2's one-time `templateId`), the machine's CUDA version, and the env the start flags add.
 */

/** A template a pod may take settings from: it must exist (404) and be a pod template (400). */
export function podTemplate(template: Template | undefined, id: string): Template {
  if (!template) throw new EmulatorError("NOT_FOUND", `template "${id}" not found; list your templates with GET /v2/templates`);
  if (template.isServerless) throw invalidBody([`$.templateId: template "${id}" is a serverless template; pods take pod templates (serverless false)`]);
  return template;
}

/** The container settings of a body with a template's under them: the body's win, `env` merges per key. */
function containerUnder(given: Pick<PodCreate, "imageName" | "dockerStartCmd" | "containerDiskInGb" | "ports" | "env">, t: Template) {
  return {
    imageName: given.imageName ?? t.imageName,
    dockerStartCmd: given.dockerStartCmd ?? t.dockerStartCmd,
    containerDiskInGb: given.containerDiskInGb ?? t.containerDiskInGb,
    ports: given.ports ?? t.ports,
    env: { ...t.env, ...given.env },
  };
}

/** The create body with a template's settings under it; CPU pods take no persistent volume or CUDA set from it. */
export function withTemplate(input: PodCreate, t: Template): PodCreate {
  const gpu = (input.computeType ?? "GPU") === "GPU";
  const ownCuda = input.allowedCudaVersions !== undefined || input.minCudaVersion !== undefined;
  return {
    ...input,
    ...containerUnder(input, t),
    dockerEntrypoint: input.dockerEntrypoint ?? t.dockerEntrypoint,
    volumeInGb: input.volumeInGb ?? (gpu ? t.volumeInGb : 0),
    volumeMountPath: input.volumeMountPath ?? t.volumeMountPath,
    containerRegistryAuthId: input.containerRegistryAuthId ?? t.containerRegistryAuthId,
    startSsh: input.startSsh ?? t.startSsh,
    startJupyter: input.startJupyter ?? t.startJupyter,
    allowedCudaVersions: ownCuda || !gpu ? input.allowedCudaVersions : t.allowedCudaVersions,
    fromTemplate: undefined,
  };
}

/** An update with a template's container settings under it (mounts are not applied on update). */
export function updateWithTemplate(patch: PodUpdate, t: Template): PodUpdate {
  return {
    ...patch,
    ...containerUnder({ ...patch, containerDiskInGb: patch.containerDiskInGb ?? undefined }, t),
    containerRegistryAuthId: patch.containerRegistryAuthId !== undefined ? patch.containerRegistryAuthId : (t.containerRegistryAuthId ?? null),
    fromTemplate: undefined,
  };
}

/** `major.minor` compared as numbers: 12.11 is above 12.2. */
const cudaAtLeast = (version: string, floor: string): boolean => {
  const [a = 0, b = 0] = version.split(".").map(Number);
  const [c = 0, d = 0] = floor.split(".").map(Number);
  return a > c || (a === c && b >= d);
};

/**
 * The CUDA version of a GPU pod's machine: the first allowed one, else the newest at or above the
 * floor, else the newest. A version no machine has is a placement failure (400), as on the service.
 */
export function machineCuda(allowed: readonly string[] | undefined, floor: string | undefined, errors: string[]): string | undefined {
  const known = CUDA_VERSIONS as readonly string[];
  if (allowed?.length && floor !== undefined) {
    errors.push("$.gpu: allowedCudaVersions (non-empty) and minCudaVersion exclude each other; send one of them");
    return undefined;
  }
  if (allowed?.length) {
    const found = allowed.find((v) => known.includes(v));
    if (!found) errors.push(`$.gpu.allowedCudaVersions: no machine has CUDA ${allowed.join(" or ")}; machines have ${known.join(", ")}`);
    return found;
  }
  if (floor !== undefined) {
    const found = known.find((v) => cudaAtLeast(v, floor));
    if (!found) errors.push(`$.gpu.minCudaVersion: no machine has CUDA ${floor} or newer; the newest is ${known[0]}`);
    return found;
  }
  return known[0];
}

/** The env with what the start flags add, unless the env sets it already. */
export function startEnv(
  env: Record<string, string>,
  o: { startSsh?: boolean | undefined; startJupyter?: boolean | undefined; sshKeys: readonly string[]; secret: () => string },
): Record<string, string> {
  const out = { ...env };
  if (o.startSsh && o.sshKeys.length && out.PUBLIC_KEY === undefined) out.PUBLIC_KEY = o.sshKeys.join("\n");
  if (o.startJupyter && out.JUPYTER_PASSWORD === undefined) out.JUPYTER_PASSWORD = o.secret();
  return out;
}
