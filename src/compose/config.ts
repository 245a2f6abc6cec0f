import { z } from "zod";
import { configReader, type ConfigReader } from "../config/load.js";
import { SERVICES } from "../services/index.js";
import type { ServiceDef } from "../services/shared/service.js";

const readers = new WeakMap<readonly ServiceDef[], ConfigReader>();

/**
 * How the config of an emulator built with `services` is read and checked: the engine's keys and
 * each service's part, its fault rules naming their collections. Typed for the list of
 * services/index.ts, which it reads by default.
 */
export function configFor(services: readonly ServiceDef[] = SERVICES): ConfigReader<typeof SERVICES> {
  let reader = readers.get(services);
  if (!reader) readers.set(services, (reader = configReader(services)));
  return reader as unknown as ConfigReader<typeof SERVICES>;
}

/** Validates a config object for the services of the list; on failure throws ConfigError listing every bad path. */
export const parseConfig: ConfigReader<typeof SERVICES>["parse"] = (raw, source) => configFor().parse(raw, source);
/** Reads and validates a JSON config file for the services of the list. */
export const loadConfigFile: ConfigReader<typeof SERVICES>["loadFile"] = (file) => configFor().loadFile(file);
/** A config given as an object, for the services of the list. */
export const inlineConfig: ConfigReader<typeof SERVICES>["inline"] = (raw, baseDir) => configFor().inline(raw, baseDir);

/** The JSON Schema of emulator.config.json (input side: fields with defaults are optional). */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configFor().schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  return {
    title: "minipod configuration (emulator.config.json)",
    ...schema,
  };
}
