import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Config } from "../services/index.js";
import { BUILTIN_IMAGES, imageCommand, imageRuleFor } from "../domain/images.js";
import { artifactPath } from "../services/flash-builds/index.js";
import { documentsVersion } from "../store/document-store.js";
import type { ImageLaunch } from "../launch/image-workers.js";
import type { EmulatorRuntime } from "./runtime.js";

/**
 * The folder holding minipod's Python package (`minipod/runtimes/...`) beside this code: python/src
 * of a clone or of the npm package; undefined when it is not there (then the interpreter must
 * have the package installed: pip install minipod's python/).
 */
function pythonPackageDir(): string | undefined {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, "python", "src");
    if (existsSync(join(candidate, "minipod", "runtimes", "flash.py"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * What the worker processes of an endpoint run when its template's image is one of the config's
 * `images` (or minipod's own entries): the command with its interpreter, the template's env and the
 * entry's (a secret it refers to as `{{ RUNPOD_SECRET_<name> }}` replaced by its value), for
 * minipod's own runtimes its Python package on PYTHONPATH, and for an endpoint of a deployed Flash
 * app the path of its build's artifact on minipod (MINIPOD_FLASH_ARTIFACT).
 */
export function imageLauncher(
  core: EmulatorRuntime,
  config: Pick<Config, "images">,
  baseDir: string,
  output: (line: string) => void = () => {},
): (endpointId: string) => ImageLaunch | undefined {
  const rules = [...config.images, ...BUILTIN_IMAGES];
  const packageDir = pythonPackageDir();
  // The interpreter and Python path of minipod's own images, as minipod starts (a queued job asks
  // for its endpoint's launch: reading the environment each time cost more than the rest of it).
  const { MINIPOD_PYTHON: python, PYTHONPATH: pythonPath } = process.env;
  // Kept per endpoint while no document (endpoint, template, secret, Flash environment...) has changed.
  const kept = new Map<string, { version: number; launch: ImageLaunch | undefined }>();
  return (endpointId) => {
    const version = documentsVersion(core.db);
    const hit = kept.get(endpointId);
    if (hit !== undefined && hit.version === version) return hit.launch;
    if (hit !== undefined) kept.clear();
    const launch = launchOf(endpointId);
    kept.set(endpointId, { version, launch });
    return launch;
  };

  function launchOf(endpointId: string): ImageLaunch | undefined {
    const manager = core.services.endpointManager;
    const endpoint = manager.find(endpointId);
    const template = endpoint && manager.template(endpoint);
    const rule = imageRuleFor(rules, template?.imageName);
    if (!template || !rule) return undefined;
    // `{{ RUNPOD_SECRET_<name> }}` in the template's env: the secret's value, in the process's env only.
    const { env: templateEnv, missing } = core.services.secrets.substitute(template.env);
    if (missing.length) warnMissing(endpointId, missing, output);
    // minipod's job loop (minipod.runtimes.job_loop) sends a result and its next job-take in one
    // write when it runs in a process of minipod's (see docs/workers.md); an entry may say "0".
    const env: Record<string, string> = { ...templateEnv, MINIPOD_WORKER_PIPELINING: "1", ...rule.env };
    // A deployed Flash app's endpoint: its workers fetch the environment's active build from minipod
    // (a new build deployed is a new launch, so its workers start afresh).
    const artifact = core.services.flashEnvironments.artifactOf(endpoint.fields.flashEnvironmentId);
    if (artifact !== undefined) env.MINIPOD_FLASH_ARTIFACT = artifactPath(artifact);
    if (rule.builtin && packageDir) env.PYTHONPATH = [packageDir, env.PYTHONPATH ?? pythonPath].filter(Boolean).join(":");
    return { command: imageCommand(rule, python || "python3"), env, cwd: rule.cwd === undefined ? undefined : resolve(baseDir, rule.cwd) };
  }
}

const warned = new WeakMap<(line: string) => void, Set<string>>();

/** Says once per endpoint and name that a secret referred to is not defined (the reference stays as written). */
function warnMissing(endpointId: string, names: string[], output: (line: string) => void): void {
  let seen = warned.get(output);
  if (!seen) warned.set(output, (seen = new Set()));
  const fresh = names.filter((n) => !seen.has(`${endpointId}/${n}`));
  if (!fresh.length) return;
  for (const n of fresh) seen.add(`${endpointId}/${n}`);
  output(`minipod: endpoint ${endpointId} refers to secret${fresh.length > 1 ? "s" : ""} ${fresh.map((n) => `"${n}"`).join(", ")}, not defined (secretCreate); its worker processes get the reference as written`);
}
