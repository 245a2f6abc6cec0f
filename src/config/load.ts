import { unknownName } from "../domain/nearest.js";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { z } from "zod";
import { faultOperations, faultRuleSchema, type FaultRuleSchema } from "./faults-schema.js";
import type { ConfiguredService } from "./part.js";
import { ClockConfigSchema, configSchema, type ConfigInputOf, type ConfigOf, type ConfigSchemaOf } from "./schema.js";

/** A configuration that cannot be used; the message names each bad field and why. */
export class ConfigError extends Error {
  constructor(
    message: string,
    /** A config found invalid: how it is named, and its problems, one line each (`field: why`). */
    readonly invalid?: { label: string; problems: string[] },
  ) {
    super(message);
    this.name = "ConfigError";
  }
}

/** The error of a config with these problems (`endpoints[0].handler: ...`), listed under its name. */
export function invalidConfig(label: string, problems: string[]): ConfigError {
  return new ConfigError(`${label} is invalid:\n${problems.map((p) => `  - ${p.replaceAll("\n", "\n    ")}`).join("\n")}`, { label, problems });
}

/** A config as read, before it is validated. */
export interface ConfigSource {
  raw: unknown;
  /** Folder that relative paths in the config (handler modules) start from. */
  baseDir: string;
  /** Where it came from, for messages: a file path or "inline". */
  source: string;
  /** How messages name it: `config file /path/emulator.config.json`, or `config`. */
  label: string;
}

export interface LoadedConfig<C = unknown> extends ConfigSource {
  config: C;
}

/** How the config of an emulator is read and checked, for the services `L` it is built with. */
export interface ConfigReader<L extends readonly ConfiguredService[] = readonly ConfiguredService[]> {
  schema: ConfigSchemaOf<L>;
  /** Validates a config object; on failure throws ConfigError listing every bad path. */
  parse(raw: unknown, source?: string): ConfigOf<L>;
  /** A config source validated; throws ConfigError listing every bad path. */
  validated(source: ConfigSource): LoadedConfig<ConfigOf<L>>;
  /** Reads and validates a JSON config file. */
  loadFile(file: string): LoadedConfig<ConfigOf<L>>;
  /** A config given as an object (programmatic API), validated. */
  inline(raw: ConfigInputOf<L> | undefined, baseDir?: string): LoadedConfig<ConfigOf<L>>;
  /** The schema of one fault rule (the control API's body). */
  faultRuleSchema: FaultRuleSchema;
}

/** Reads configs with the parts of `services`, whose fault rules and reserved ids are those of their collections. */
export function configReader<const L extends readonly ConfiguredService[]>(services: L): ConfigReader<L> {
  const schema = configSchema(services);
  const parse = (raw: unknown, source = "config"): ConfigOf<L> => {
    const result = schema.safeParse(raw);
    if (!result.success) throw invalidConfig(source, describeIssues(result.error, undefined, schema));
    return result.data;
  };
  const validated = (source: ConfigSource): LoadedConfig<ConfigOf<L>> => ({ ...source, config: parse(source.raw, source.label) });
  return {
    schema,
    parse,
    validated,
    loadFile: (file) => validated(readConfigFile(file)),
    inline: (raw, baseDir) => validated(inlineSource(raw, baseDir)),
    faultRuleSchema: faultRuleSchema(faultOperations([...services.flatMap((s) => s.collections.v1 ?? []), ...services.flatMap((s) => s.collections.v2 ?? [])])),
  };
}

/** Reads a JSON config file, unvalidated; throws ConfigError when it cannot be read or is not JSON. */
export function readConfigFile(file: string): ConfigSource {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${withLineAndColumn((e as Error).message, text)}`);
  }
  return { raw, baseDir: dirname(path), source: path, label: `config file ${path}` };
}

/** A config given as an object (programmatic API), unvalidated. */
export function inlineSource(raw: unknown, baseDir = process.cwd()): ConfigSource {
  return { raw: raw ?? {}, baseDir, source: "inline", label: "config" };
}


/** Runs a step of putting the config to use; what it throws becomes a ConfigError naming `field`. */
export type AtField = <T>(field: string, step: () => T) => T;

/**
 * An `AtField` for the config `label` names: `endpoints[2].handler: cannot load ./x.ts: ...`. A
 * validation error's entries (`$.dataCenterIds: ...`, from the same checks the API runs) are
 * placed under the field.
 */
export function atConfigField(label: string): AtField {
  const fail = (field: string, e: unknown): ConfigError => {
    const listed = (e as { errors?: unknown }).errors;
    const lines = Array.isArray(listed) && listed.length > 0
      ? listed.map((line) => (typeof line === "string" && line.startsWith("$") ? `${field}${line.slice(1)}` : `${field}: ${String(line)}`))
      : [`${field}: ${(e as Error)?.message ?? String(e)}`];
    return invalidConfig(label, lines);
  };
  return <T>(field: string, step: () => T): T => {
    let out: T;
    try {
      out = step();
    } catch (e) {
      throw fail(field, e);
    }
    return (out instanceof Promise ? out.catch((e: unknown) => Promise.reject(fail(field, e))) : out) as T;
  };
}

/**
 * Checks the `clock` option of `createEmulator` as the config's `clock` is checked (it overrides
 * it); throws ConfigError naming each bad field.
 */
export function checkClockOption(raw: { mode?: unknown; speed?: unknown; start?: unknown; wall?: unknown } | undefined): void {
  if (raw === undefined) return;
  // `wall` (a function standing in for wall time, for tests) exists only in code, not in the config.
  const { wall: _wall, ...checked } = raw;
  const result = ClockConfigSchema.safeParse(checked);
  if (!result.success) throw invalidConfig("the clock option", describeIssues(result.error, "clock", ClockConfigSchema));
}

/** Checks the `port` option of `createEmulator`. */
export function checkPortOption(port: unknown): void {
  if (port !== undefined && !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535)) {
    throw new ConfigError(`port must be an integer from 0 to 65535 (0 picks a free one), got ${String(port)}`);
  }
}

/** A JSON.parse message with the line and column of its position (Node 20 gives only the position). */
export function withLineAndColumn(message: string, text: string): string {
  const at = /at position (\d+)/.exec(message);
  if (!at || /line \d+/.test(message)) return message;
  const before = text.slice(0, Number(at[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return `${message} (line ${line}, column ${column})`;
}

/** The keys an object schema at `path` of `schema` allows (through arrays, defaults and optionals). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  let node: unknown = schema;
  const unwrap = () => {
    for (;;) {
      const def = (node as { _zod?: { def?: { type?: string; innerType?: unknown; in?: unknown } } })?._zod?.def;
      if (def && ["optional", "default", "nullable", "readonly", "prefault", "catch"].includes(def.type ?? "")) node = def.innerType;
      else if (def?.type === "pipe") node = def.in;
      else return def as { type?: string; shape?: Record<string, unknown>; element?: unknown } | undefined;
    }
  };
  for (const key of path) {
    const def = unwrap();
    if (def?.type === "array" && typeof key === "number") node = def.element;
    else if (def?.type === "object" && typeof key === "string" && def.shape) node = def.shape[key];
    else return undefined;
  }
  const def = unwrap();
  return def?.type === "object" && def.shape ? Object.keys(def.shape) : undefined;
}

function describeIssues(error: z.ZodError, prefix: string | undefined, schema: z.ZodType): string[] {
  return error.issues.flatMap((i) => {
    const inner = i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("");
    const path = prefix ? `${prefix}${inner}` : inner ? inner.replace(/^\./, "") : "(root)";
    if (i.code === "unrecognized_keys") {
      const valid = keysAt(schema, i.path);
      if (valid) return i.keys.map((k) => `${path}: ${unknownName("key", k, valid)}`);
    }
    return [`${path}: ${i.message}`];
  });
}
