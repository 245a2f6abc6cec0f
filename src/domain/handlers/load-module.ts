import { existsSync } from "node:fs";
import { isAbsolute, resolve, extname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Handler } from "./types.js";

const MODULE_EXTENSIONS = new Set([".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"]);

/** A handler reference names a module when it looks like a path or has a script extension. */
export function isModuleRef(ref: string): boolean {
  return ref.startsWith("./") || ref.startsWith("../") || isAbsolute(ref) || MODULE_EXTENSIONS.has(extname(ref));
}

const NO_TSX =
  "a TypeScript handler module is loaded through tsx, which this copy of minipod does not carry (the Python package's): write the handler as JavaScript (.mjs), or run minipod installed with npm (npm install minipod)";
let reloads = 0;

/** tsx's import, or undefined where tsx is not installed (the Python package carries no tsx). */
async function tsx(): Promise<((url: string, parent: string) => Promise<unknown>) | undefined> {
  try {
    return (await import("tsx/esm/api")).tsImport;
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_MODULE_NOT_FOUND" && /'tsx'/.test((error as Error).message)) return undefined;
    throw error;
  }
}

/**
 * Loads a handler module (`.js` natively, `.ts` through tsx) relative to `baseDir`. The module
 * exports the handler as `default` or as `handler`. `fresh`: evaluated anew, with the modules it
 * imports (through tsx, whose every import is a new instance), for a reload after an edit.
 */
export async function loadHandlerModule(ref: string, baseDir: string, fresh = false): Promise<Handler> {
  const file = resolve(baseDir, ref);
  if (!existsSync(file)) throw new Error(`cannot load ${ref}: no such file (looked for ${file})`);
  const url = pathToFileURL(file).href;
  let mod: Record<string, unknown>;
  const typescript = [".ts", ".mts", ".cts"].includes(extname(file));
  try {
    const tsImport = fresh || typescript ? await tsx() : undefined;
    if (tsImport) mod = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
    else if (typescript) throw new ModuleTypeError(NO_TSX);
    // Without tsx, a reload evaluates the module anew, not what it imports.
    else mod = await importJs(fresh ? `${url}?reload=${++reloads}` : url, file);
  } catch (error) {
    if (error instanceof ModuleTypeError) throw new Error(`cannot load ${ref}: ${error.message}`, { cause: error });
    throw new Error(`cannot load ${ref} (${file}): it threw as it loaded: ${moduleStack(error)}`, { cause: error });
  }
  const fn = pick(mod);
  if (typeof fn !== "function") {
    throw new Error(`cannot load ${ref}: it exports no function as default or as "handler"`);
  }
  return fn as Handler;
}

/** Frames of Node and of tsx (which loads .ts files), left out of a module's stack. */
const NOT_THE_MODULES = (frame: string) => frame.includes("node:internal") || frame.includes("(node:") || /[\\/]node_modules[\\/]tsx[\\/]/.test(frame);
/** This file (or the bundle it is in): from its first frame on, the stack is minipod's, loading the module. */
const OWN_FILE = fileURLToPath(import.meta.url);
/**
 * tsx runs a .ts file of a CommonJS package from a `data:` URL carrying the file's path, and
 * without a source map: the frame is given the file's path, without the position in the compiled
 * code (which is not the file's).
 */
const COMPILED = /data:text\/javascript,[^\s]*?\?filePath=([^\s():]+)(?::\d+:\d+)?/;
/** Frames shown of a module's stack: where it threw is in the first ones. */
const FRAMES_SHOWN = 12;

/**
 * What a module threw as it loaded, with the frames of its stack in the user's code (where it
 * threw, through what it imports), so that the error can be found from the message alone.
 */
function moduleStack(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const lines = (error.stack ?? `${error.name}: ${error.message}`).split("\n");
  const frame = (l: string) => /^\s+at /.test(l);
  const own = lines.findIndex((l) => frame(l) && (l.includes(OWN_FILE) || l.includes(import.meta.url)));
  const frames = lines
    .slice(0, own === -1 ? undefined : own)
    .filter((l) => frame(l) && !NOT_THE_MODULES(l))
    .slice(0, FRAMES_SHOWN)
    .map((l) => `  ${l.trim().replace(COMPILED, (_, path: string) => decodeURIComponent(path).replace(/\?namespace=.*$/, ""))}`);
  return [...lines.filter((l) => !frame(l)), ...frames].join("\n").trimEnd();
}

/** A module that Node reads as a type it is not written in: the message says what to change. */
class ModuleTypeError extends Error {}

/** ES module syntax in a file Node reads as CommonJS (`.js` in a package without "type": "module"). */
const esmInCommonJs = (e: unknown) => e instanceof SyntaxError && /Unexpected token 'export'|Cannot use import statement outside a module/.test(e.message);

/**
 * A `.js`, `.mjs` or `.cjs` handler. A `.js` file with `export` in a CommonJS project (what
 * `npm init` makes) is loaded through tsx, which reads it as an ES module, rather than failing
 * with Node's "Unexpected token 'export'".
 */
async function importJs(url: string, file: string): Promise<Record<string, unknown>> {
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if (!esmInCommonJs(error) || extname(file) !== ".js") throw error;
    try {
      const { tsImport } = await import("tsx/esm/api");
      return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
    } catch (again) {
      throw new ModuleTypeError(
        `${(error as Error).message}: the file uses ES module syntax (export/import) but its package.json has no "type": "module"; rename it to .mjs or add "type": "module" (tsx could not load it either: ${(again as Error).message})`,
        { cause: again },
      );
    }
  }
}

function pick(mod: Record<string, unknown>): unknown {
  if (typeof mod.default === "function") return mod.default;
  if (typeof mod.handler === "function") return mod.handler;
  // tsx may wrap a CommonJS-style default once more.
  const inner = mod.default as Record<string, unknown> | undefined;
  if (inner && typeof inner === "object") return inner.default ?? inner.handler;
  return undefined;
}
