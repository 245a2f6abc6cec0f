import { isRecord } from "./protocol.js";

const MAX_DEPTH = 8;

/**
 * A value that fits a JSON Schema, the same every time: a tool call's arguments made from the
 * tool's `parameters`, or a reply for `response_format: {type: "json_schema"}`. It takes `const`,
 * the first `enum` value, `default` or the first of `examples` when the schema gives one; else
 * every property an object requires (all of them when it lists none), one item per array (or
 * `minItems`), `"example <name>"` for strings, the minimum (or 1) for numbers, `true`.
 */
export function schemaValue(schema: unknown, root: unknown = schema, name = "value", depth = 0): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return null;
  if (typeof schema.$ref === "string") return schemaValue(resolveRef(root, schema.$ref), root, name, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const choices = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (choices) return schemaValue(choices.find((c) => !(isRecord(c) && c.type === "null")) ?? choices[0], root, name, depth + 1);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s) => schemaValue(s, root, name, depth + 1)).filter(isRecord));
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "object" || (type === undefined && isRecord(schema.properties))) {
    const props = isRecord(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === "string") : Object.keys(props);
    return Object.fromEntries(required.map((key) => [key, schemaValue(props[key] ?? {}, root, key, depth + 1)]));
  }
  if (type === "array") {
    const n = typeof schema.minItems === "number" && schema.minItems > 1 ? Math.min(schema.minItems, 10) : 1;
    return Array.from({ length: n }, () => schemaValue(schema.items ?? {}, root, name, depth + 1));
  }
  if (type === "string") return stringValue(schema, name);
  if (type === "integer") return typeof schema.minimum === "number" ? Math.ceil(schema.minimum) : 1;
  if (type === "number") return typeof schema.minimum === "number" ? schema.minimum : 1;
  if (type === "boolean") return true;
  return null;
}

function stringValue(schema: Record<string, unknown>, name: string): string {
  if (schema.format === "date-time") return "2025-01-01T00:00:00Z";
  if (schema.format === "date") return "2025-01-01";
  if (schema.format === "email") return "someone@example.com";
  if (schema.format === "uri" || schema.format === "url") return "https://example.com/";
  let s = `example ${name}`;
  if (typeof schema.maxLength === "number") s = s.slice(0, Math.max(0, schema.maxLength));
  if (typeof schema.minLength === "number" && s.length < schema.minLength) s = s.padEnd(schema.minLength, "x");
  return s;
}

/** A local `$ref` (`#/$defs/x`, `#/definitions/x`) in the root schema. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(1).split("/").filter(Boolean)) {
    if (!isRecord(node)) return undefined;
    node = node[part.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return node;
}
