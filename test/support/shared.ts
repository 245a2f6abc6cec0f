import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The folder kept beside the repository (`../shared`; `MINIPOD_SHARED` names another): the
 * service's published REST descriptions (`spec/`) and the Python stand-ins (`clients/python/stubs`).
 * None of it is part of minipod; a test that needs it says it was skipped where it is absent.
 */
export const SHARED = resolve(process.env.MINIPOD_SHARED ?? join(ROOT, "../shared"));

/** The service's published REST description `name` (rest-v1, rest-v2), or undefined where the folder is absent. */
export function specFile(name: "rest-v1" | "rest-v2"): string | undefined {
  const file = join(SHARED, "spec", `${name}.openapi.json`);
  return existsSync(file) ? file : undefined;
}

/** The one line a test prints when it is skipped for want of a published description. */
export function specMissing(name: string): string {
  return `skipped: the service's published ${name}.openapi.json is not at ${join(SHARED, "spec")} (keep the shared folder beside the repository, or set MINIPOD_SHARED)`;
}

/** The Python stand-ins for what Debian does not package (aiohttp_retry, tqdm_loggable, sitecustomize). */
export const STUBS = resolve(process.env.MINIPOD_STUBS ?? join(SHARED, "clients/python/stubs"));

/**
 * The folder of the service's Python clients as published (`MINIPOD_CLIENTS`): runpod-python
 * (1.12.0), runpod-python-2 (SDK 2.x), runpod-flash (its package under src/). Undefined when unset.
 */
export const CLIENTS = process.env.MINIPOD_CLIENTS ? resolve(process.env.MINIPOD_CLIENTS) : undefined;
