import type { z } from "zod";

type Def = { type: string; in?: z.ZodType; innerType?: z.ZodType; shape?: Record<string, z.ZodType>; element?: z.ZodType };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** A schema without the wrappers that do not change its JSON shape (pipes, defaults, optional, ...). */
function unwrap(schema: z.ZodType): z.ZodType {
  for (let i = 0; i < 10; i++) {
    const def = defOf(schema);
    const inner = def.type === "pipe" ? def.in : def.innerType;
    if (!inner) return schema;
    schema = inner;
  }
  return schema;
}

/** A placeholder for a value of `schema` in an example: `{...}`, `[...]`, `"..."` or `...`. */
function placeholder(schema: z.ZodType): string {
  const type = defOf(unwrap(schema)).type;
  if (type === "object" || type === "record") return "{...}";
  if (type === "array" || type === "tuple") return "[...]";
  if (type === "string") return '"..."';
  return "...";
}

/**
 * What to send, for the message about a body that is not JSON, from the route's own body schema:
 * `send a JSON object such as {"input": {...}}` on `/run`, `{"ms": ...}` on a clock advance,
 * the required properties of each route (or its first one when none is required).
 */
export function bodyHint(schema: z.ZodType): string {
  const def = defOf(unwrap(schema));
  if (def.type === "array") return "send a JSON array";
  if (def.type !== "object" || !def.shape) return "send the body as JSON";
  const keys = Object.keys(def.shape);
  if (keys.length === 0) return "send a JSON object, such as {}";
  const required = keys.filter((k) => !def.shape![k]!.safeParse(undefined).success);
  const shown = required.length > 0 ? required : keys.slice(0, 1);
  return `send a JSON object such as {${shown.map((k) => `${JSON.stringify(k)}: ${placeholder(def.shape![k]!)}`).join(", ")}}`;
}
