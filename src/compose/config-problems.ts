import { ConfigError, invalidConfig } from "../config/load.js";
import { HandlerRegistry } from "../domain/handlers/registry.js";
import type { Handler } from "../domain/handlers/types.js";
import { ProcessWall } from "./process-wall.js";

/** The handler references a config names itself, each with its field (inherited ones are named where they are written). */
function handlerFields(raw: unknown): Array<[field: string, ref: unknown]> {
  const config = (raw ?? {}) as { endpoints?: unknown; templates?: unknown; defaultHandler?: unknown };
  const listed = (name: "endpoints" | "templates") => {
    const items = config[name];
    return Array.isArray(items) ? items.map((item, i): [string, unknown] => [`${name}[${i}].handler`, (item as { handler?: unknown } | null)?.handler]) : [];
  };
  return [...listed("templates"), ["defaultHandler", config.defaultHandler], ...listed("endpoints")];
}

/**
 * `error` with the problem of every handler the config names added, when it is a config found
 * invalid: validation stops before any handler is loaded, and the start at the first one that
 * does not load, which hid the others (a wrong type, then a misspelt handler name, made two runs
 * to find). Each handler reference (a string: the schema says what is wrong with anything else)
 * is prepared as the start would; a field the error names already is left as it says. Anything
 * else is returned as it is.
 */
export async function withEveryHandlerProblem(error: unknown, raw: unknown, baseDir: string, functions: Record<string, Handler>): Promise<unknown> {
  if (!(error instanceof ConfigError) || !error.invalid) return error;
  const { label, problems } = error.invalid;
  const named = (field: string) => problems.some((p) => p.startsWith(`${field}:`) || p.startsWith(`${field}.`));
  // Only prepared here, never run: the process's wall stands in for a clock's.
  const handlers = new HandlerRegistry(baseDir, new ProcessWall(() => {}), functions);
  const more: string[] = [];
  for (const [field, ref] of handlerFields(raw)) {
    if (typeof ref !== "string" || ref === "" || named(field)) continue;
    try {
      await handlers.prepare(ref);
    } catch (e) {
      more.push(`${field}: ${(e as Error).message}`);
    }
  }
  if (more.length === 0) return error;
  // In the order of the fields (endpoints[2] before endpoints[10]), each field's problems as found.
  const field = (problem: string) => problem.slice(0, problem.indexOf(":"));
  return invalidConfig(label, [...problems, ...more].sort((a, b) => field(a).localeCompare(field(b), "en", { numeric: true })));
}
