import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { z } from "zod";
import { ConfigSchema, type Config, type ConfigInput } from "./schema.js";

/** A configuration that cannot be used; the message names each bad field and why. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export interface LoadedConfig {
  config: Config;
  /** Folder that relative paths in the config (handler modules) start from. */
  baseDir: string;
  /** Where it came from, for messages: a file path or "inline". */
  source: string;
}

/** Validates a config object; on failure throws ConfigError listing every bad path. */
export function parseConfig(raw: unknown, source = "config"): Config {
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(`${source} is invalid:\n${describeIssues(result.error)}`);
  return result.data;
}

/** Reads and validates a JSON config file. */
export function loadConfigFile(file: string): LoadedConfig {
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
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  return { config: parseConfig(raw, `config file ${path}`), baseDir: dirname(path), source: path };
}

/** A config given as an object (programmatic API). */
export function inlineConfig(raw: ConfigInput | undefined, baseDir = process.cwd()): LoadedConfig {
  return { config: parseConfig(raw ?? {}, "config"), baseDir, source: "inline" };
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.length ? i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "") : "(root)";
      return `  - ${path}: ${i.message}`;
    })
    .join("\n");
}
