import { z } from "zod";
import { configReader, type ConfigReader } from "../config/load.js";
import type { ServiceNames } from "../config/schema.js";
import { SERVICES } from "../services/index.js";
import type { ServiceDef } from "../services/shared/service.js";

/** The REST collections of the services built: the ids the config reserves and the operations fault rules name. */
export function serviceNames(services: readonly ServiceDef[]): ServiceNames {
  return { v1: services.flatMap((s) => s.collections.v1 ?? []), v2: services.flatMap((s) => s.collections.v2 ?? []) };
}

const readers = new WeakMap<readonly ServiceDef[], ConfigReader>();

/** How the config of an emulator built with `services` (default: the list) is read and checked. */
export function configFor(services: readonly ServiceDef[] = SERVICES): ConfigReader {
  let reader = readers.get(services);
  if (!reader) readers.set(services, (reader = configReader(serviceNames(services))));
  return reader;
}

/** Validates a config object for the services of the list; on failure throws ConfigError listing every bad path. */
export const parseConfig: ConfigReader["parse"] = (raw, source) => configFor().parse(raw, source);
/** Reads and validates a JSON config file for the services of the list. */
export const loadConfigFile: ConfigReader["loadFile"] = (file) => configFor().loadFile(file);
/** A config given as an object, for the services of the list. */
export const inlineConfig: ConfigReader["inline"] = (raw, baseDir) => configFor().inline(raw, baseDir);

/** The JSON Schema of emulator.config.json (input side: fields with defaults are optional). */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(configFor().schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  return {
    title: "minipod configuration (emulator.config.json)",
    ...schema,
  };
}
