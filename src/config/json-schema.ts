import { z } from "zod";
import { ConfigSchema } from "./schema.js";

/** The JSON Schema of emulator.config.json (input side: fields with defaults are optional). */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  return {
    title: "minipod configuration (emulator.config.json)",
    ...schema,
  };
}
