import { isRecord } from "./protocol.js";

const MAX_DEPTH = 8;
/** The most values (objects, arrays and scalars) one generated value may hold. */
export const SCHEMA_VALUE_MAX_NODES = 10_000;
/** The most characters of strings one generated value may hold. */
export const SCHEMA_VALUE_MAX_CHARS = 100_000;

/** A schema whose value would pass the bounds above: refused before anything large is built. */
export class SchemaTooLarge extends Error {}

interface Budget {
  nodes: number;
  chars: number;
}

/**
 * {@link schemaValue} within the bounds, or a message saying which bound a schema passed
 * (`minItems` nested or a `$ref` to an ancestor multiply; `minLength` is read before a string is
 * padded), so a caller's schema can neither exhaust memory nor block the event loop.
 */
export function boundedSchemaValue(schema: unknown): { value: unknown } | { error: string } {
  try {
    return { value: schemaValue(schema) };
  } catch (e) {
    if (e instanceof SchemaTooLarge) return { error: e.message };
    throw e;
  }
}

/**
 * A value that fits a JSON Schema, the same every time: a tool call's arguments made from the
 * tool's `parameters`, or a reply for `response_format: {type: "json_schema"}`. It takes `const`,
 * the first `enum` value, `default` or the first of `examples` when the schema gives one; else
 * every property an object requires (all of them when it lists none), one item per array (or
 * `minItems`), `"example <name>"` for strings, the minimum (or 1) for numbers, `true`.
 */
export function schemaValue(schema: unknown, root: unknown = schema, name = "value", depth = 0, budget: Budget = { nodes: 0, chars: 0 }): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return null;
  if (++budget.nodes > SCHEMA_VALUE_MAX_NODES) {
    throw new SchemaTooLarge(`the schema asks for a value of more than ${SCHEMA_VALUE_MAX_NODES.toLocaleString("en-US")} items (nested minItems or a $ref to an ancestor multiply)`);
  }
  const next = (s: unknown, key = name) => schemaValue(s, root, key, depth + 1, budget);
  if (typeof schema.$ref === "string") return next(resolveRef(root, schema.$ref));
  if ("const" in schema) return given(schema, schema.const, budget);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return given(schema, schema.enum[0], budget);
  if ("default" in schema) return given(schema, schema.default, budget);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return given(schema, schema.examples[0], budget);
  const choices = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (choices) return next(choices.find((c) => !(isRecord(c) && c.type === "null")) ?? choices[0]);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s) => next(s)).filter(isRecord));
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (type === "object" || (type === undefined && isRecord(schema.properties))) {
    const props = isRecord(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === "string") : Object.keys(props);
    return Object.fromEntries(required.map((key) => [key, next(props[key] ?? {}, key)]));
  }
  if (type === "array") {
    const n = typeof schema.minItems === "number" && schema.minItems > 1 ? Math.min(schema.minItems, 10) : 1;
    return Array.from({ length: n }, () => next(schema.items ?? {}));
  }
  if (type === "string") {
    const s = stringValue(schema, name, SCHEMA_VALUE_MAX_CHARS - budget.chars);
    budget.chars += s.length;
    return s;
  }
  if (type === "integer") return typeof schema.minimum === "number" ? Math.ceil(schema.minimum) : 1;
  if (type === "number") return typeof schema.minimum === "number" ? schema.minimum : 1;
  if (type === "boolean") return true;
  return null;
}

/** JSON sizes of the values schemas give, measured once per schema object. */
const givenSizes = new WeakMap<object, number>();

/** A value the schema gives (`const`, `enum`, `default`, `examples`), counted as characters: a
 * large one repeated by `minItems` must not multiply past the bound. */
function given(schema: Record<string, unknown>, value: unknown, budget: Budget): unknown {
  let size = givenSizes.get(schema);
  if (size === undefined) givenSizes.set(schema, (size = JSON.stringify(value)?.length ?? 0));
  budget.chars += size;
  if (budget.chars > SCHEMA_VALUE_MAX_CHARS) {
    throw new SchemaTooLarge(`the schema asks for a value of more than ${SCHEMA_VALUE_MAX_CHARS.toLocaleString("en-US")} characters (a const, enum, default or example repeated)`);
  }
  return value;
}

function stringValue(schema: Record<string, unknown>, name: string, charsLeft: number): string {
  if (schema.format === "date-time") return "2025-01-01T00:00:00Z";
  if (schema.format === "date") return "2025-01-01";
  if (schema.format === "email") return "someone@example.com";
  if (schema.format === "uri" || schema.format === "url") return "https://example.com/";
  let s = `example ${name}`;
  if (typeof schema.maxLength === "number") s = s.slice(0, Math.max(0, schema.maxLength));
  if (typeof schema.minLength === "number" && s.length < schema.minLength) {
    if (schema.minLength > charsLeft) {
      throw new SchemaTooLarge(`the schema asks for strings of more than ${SCHEMA_VALUE_MAX_CHARS.toLocaleString("en-US")} characters in all (minLength ${schema.minLength})`);
    }
    s = s.padEnd(schema.minLength, "x");
  }
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
