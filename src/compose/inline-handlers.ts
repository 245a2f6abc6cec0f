import { INLINE_PREFIX, type Handler } from "../domain/handlers/types.js";
import type { ConfigInput } from "../services/index.js";

type EndpointInput = NonNullable<ConfigInput["endpoints"]>[number];
type TemplateInput = NonNullable<ConfigInput["templates"]>[number];

/**
 * A handler given in code: a function or an async generator function. Its input is typed loosely
 * (`Record<string, any>`) so that a handler written inline reads the fields it expects without
 * casts; annotate the parameter (`async (input: { prompt: string }) => ...`) to have it checked.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type InlineHandler = Handler<Record<string, any>>;

/**
 * The configuration `createEmulator({ config })` takes: the config file's (`emulator.config.json`),
 * and besides, a function as the `handler` of an endpoint or a template, or as `defaultHandler`.
 * Functions exist only in code: the file's JSON Schema does not change.
 */
export type EmulatorConfig = Omit<ConfigInput, "endpoints" | "templates" | "defaultHandler"> & {
  defaultHandler?: ConfigInput["defaultHandler"] | InlineHandler;
  endpoints?: Array<Omit<EndpointInput, "handler"> & { handler?: EndpointInput["handler"] | InlineHandler }>;
  templates?: Array<Omit<TemplateInput, "handler"> & { handler?: TemplateInput["handler"] | InlineHandler }>;
};

/**
 * Takes the functions out of a config given in code: each is registered under a name made from
 * where it was given (`inline:gen` for endpoint `gen`, `inline:template:t` for template `t`,
 * `inline:default`), and the config names it instead, as it would name a registered handler. So
 * the rest of minipod (validation, the database, snapshots, exports, the dashboard) sees a name.
 */
export function extractInlineHandlers(config: EmulatorConfig | undefined): { config: ConfigInput | undefined; functions: Record<string, Handler> } {
  const functions: Record<string, Handler> = {};
  if (config === undefined || config === null || typeof config !== "object") return { config: config as ConfigInput | undefined, functions };
  const named = (name: string, fn: Handler): string => {
    functions[name] = fn;
    return name;
  };
  const idOr = (item: { id?: unknown }, fallback: string) => (typeof item.id === "string" && item.id !== "" ? item.id : fallback);
  const out: Record<string, unknown> = { ...config };
  if (typeof config.defaultHandler === "function") out.defaultHandler = named(`${INLINE_PREFIX}default`, config.defaultHandler);
  if (Array.isArray(config.endpoints)) {
    out.endpoints = config.endpoints.map((e, i) =>
      e !== null && typeof e === "object" && typeof e.handler === "function" ? { ...e, handler: named(`${INLINE_PREFIX}${idOr(e, `endpoints[${i}]`)}`, e.handler) } : e,
    );
  }
  if (Array.isArray(config.templates)) {
    out.templates = config.templates.map((t, i) =>
      t !== null && typeof t === "object" && typeof t.handler === "function" ? { ...t, handler: named(`${INLINE_PREFIX}template:${idOr(t, `templates[${i}]`)}`, t.handler) } : t,
    );
  }
  return { config: out as ConfigInput, functions };
}
