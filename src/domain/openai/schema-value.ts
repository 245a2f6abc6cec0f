import { isRecord } from "./protocol.js";

const MAX_DEPTH = 8;
/** The most values (objects, arrays and scalars) one generated answer may hold. */
export const SCHEMA_VALUE_MAX_NODES = 10_000;
/** The most characters the JSON text of one generated answer may hold (keys, strings, punctuation). */
export const SCHEMA_VALUE_MAX_CHARS = 100_000;

/** A schema whose value would pass the bounds above: refused before anything large is built. */
export class SchemaTooLarge extends Error {}

/**
 * What the values of one answer have used so far: values made, and characters of their JSON
 * text. Every character is counted before the part holding it is built, so a value that would
 * pass {@link SCHEMA_VALUE_MAX_CHARS} is refused having built at most that many.
 */
export interface SchemaBudget {
  nodes: number;
  chars: number;
}

export const schemaBudget = (): SchemaBudget => ({ nodes: 0, chars: 0 });

const fmt = (n: number): string => n.toLocaleString("en-US");

/**
 * {@link schemaValue} within the bounds, or a message saying which bound a schema passed
 * (`minItems` nested or a `$ref` to an ancestor multiply; a long property name is repeated in
 * every string made from it), so a caller's schema can neither exhaust memory nor block the event
 * loop. Values made for one answer (its tool calls) share one `budget`.
 */
export function boundedSchemaValue(schema: unknown, budget: SchemaBudget = schemaBudget()): { value: unknown } | { error: string } {
  try {
    return { value: schemaValue(schema, budget) };
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
 * `budget.chars` ends as the length of the value's JSON text, or more (a key `allOf` merges or
 * `required` repeats is counted each time). Throws {@link SchemaTooLarge} past the bounds.
 */
export function schemaValue(schema: unknown, budget: SchemaBudget = schemaBudget()): unknown {
  return make({ root: schema, budget, plans: new Map() }, schema, "value", 0);
}

interface Making {
  root: unknown;
  budget: SchemaBudget;
  /** What each schema object of the request asks for, read once however often it is used. */
  plans: Map<object, Plan>;
}

type Plan =
  | { kind: "ref"; target: unknown }
  | { kind: "given"; value: unknown; size: number }
  | { kind: "choice"; target: unknown }
  | { kind: "all"; parts: unknown[] }
  | { kind: "object"; props: Record<string, unknown>; required: string[] }
  | { kind: "array"; n: number; items: unknown }
  | { kind: "string" | "integer" | "number" | "boolean" | "null" };

/** What `schema` asks for: reading it takes time in its own size, once per request. */
function planOf(m: Making, schema: Record<string, unknown>): Plan {
  let plan = m.plans.get(schema);
  if (plan) return plan;
  const givenValue = (value: unknown): Plan => ({ kind: "given", value, size: JSON.stringify(value)?.length ?? 4 });
  const choices = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  if (typeof schema.$ref === "string") plan = { kind: "ref", target: resolveRef(m.root, schema.$ref) };
  else if ("const" in schema) plan = givenValue(schema.const);
  else if (Array.isArray(schema.enum) && schema.enum.length > 0) plan = givenValue(schema.enum[0]);
  else if ("default" in schema) plan = givenValue(schema.default);
  else if (Array.isArray(schema.examples) && schema.examples.length > 0) plan = givenValue(schema.examples[0]);
  else if (choices) plan = { kind: "choice", target: choices.find((c) => !(isRecord(c) && c.type === "null")) ?? choices[0] };
  else if (Array.isArray(schema.allOf)) plan = { kind: "all", parts: schema.allOf };
  else if (type === "object" || (type === undefined && isRecord(schema.properties))) {
    const props = isRecord(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required.filter((k): k is string => typeof k === "string") : Object.keys(props);
    plan = { kind: "object", props, required };
  } else if (type === "array") {
    const n = typeof schema.minItems === "number" && schema.minItems > 1 ? Math.min(Math.floor(schema.minItems), 10) : 1;
    plan = { kind: "array", n, items: schema.items ?? {} };
  } else if (type === "string" || type === "integer" || type === "number" || type === "boolean") plan = { kind: type };
  else plan = { kind: "null" };
  m.plans.set(schema, plan);
  return plan;
}

function make(m: Making, schema: unknown, name: string, depth: number): unknown {
  const { budget } = m;
  if (!isRecord(schema) || depth > MAX_DEPTH) return charged(budget, 4, null);
  if (++budget.nodes > SCHEMA_VALUE_MAX_NODES) {
    throw new SchemaTooLarge(`the schema asks for a value of more than ${fmt(SCHEMA_VALUE_MAX_NODES)} items (nested minItems or a $ref to an ancestor multiply)`);
  }
  const next = (s: unknown, key = name) => make(m, s, key, depth + 1);
  const plan = planOf(m, schema);
  switch (plan.kind) {
    case "ref":
    case "choice":
      return next(plan.target);
    case "given":
      return charged(budget, plan.size, plan.value);
    case "all": {
      charge(budget, 2);
      return Object.assign({}, ...plan.parts.map((s) => next(s)).filter(isRecord));
    }
    case "object": {
      const { props, required } = plan;
      charge(budget, 2 + Math.max(0, required.length - 1));
      const value: Record<string, unknown> = {};
      for (const key of required) {
        charge(budget, jsonLength(key, budget) + 1);
        Object.defineProperty(value, key, { value: next(Object.hasOwn(props, key) ? props[key] : {}, key), enumerable: true, writable: true, configurable: true });
      }
      return value;
    }
    case "array":
      charge(budget, 2 + plan.n - 1);
      return Array.from({ length: plan.n }, () => next(plan.items));
    case "string":
      return stringValue(schema, name, budget);
    case "integer":
      return number(typeof schema.minimum === "number" ? Math.ceil(schema.minimum) : 1, budget);
    case "number":
      return number(typeof schema.minimum === "number" ? schema.minimum : 1, budget);
    case "boolean":
      return charged(budget, 4, true);
    case "null":
      return charged(budget, 4, null);
  }
}

function charge(budget: SchemaBudget, chars: number): void {
  budget.chars += chars;
  if (budget.chars > SCHEMA_VALUE_MAX_CHARS) {
    throw new SchemaTooLarge(`the schema asks for a value of more than ${fmt(SCHEMA_VALUE_MAX_CHARS)} characters of JSON (long property names, minLength, or a const, enum, default or example, repeated)`);
  }
}

function charged<T>(budget: SchemaBudget, chars: number, value: T): T {
  charge(budget, chars);
  return value;
}

/** The length of `text` as a JSON string: measured only once its raw length (a lower bound) fits what is left. */
function jsonLength(text: string, budget: SchemaBudget): number {
  if (budget.chars + text.length + 2 > SCHEMA_VALUE_MAX_CHARS) return text.length + 2;
  return JSON.stringify(text).length;
}

const number = (n: number, budget: SchemaBudget): number => charged(budget, Number.isFinite(n) ? String(n).length : 4, n);

const FORMATS: Record<string, string> = {
  "date-time": "2025-01-01T00:00:00Z",
  date: "2025-01-01",
  email: "someone@example.com",
  uri: "https://example.com/",
  url: "https://example.com/",
};

/** `"example <name>"`, cut at `maxLength` and padded to `minLength`: its length is counted first, then only what is kept is built. */
function stringValue(schema: Record<string, unknown>, name: string, budget: SchemaBudget): string {
  const format = typeof schema.format === "string" && Object.hasOwn(FORMATS, schema.format) ? FORMATS[schema.format]! : undefined;
  if (format !== undefined) return charged(budget, format.length + 2, format);
  const prefix = "example ";
  let length = prefix.length + name.length;
  if (typeof schema.maxLength === "number") length = Math.min(length, Math.max(0, Math.floor(schema.maxLength)));
  const kept = length;
  if (typeof schema.minLength === "number" && length < schema.minLength) length = Math.ceil(schema.minLength);
  charge(budget, length + 2);
  let s = (prefix + name.slice(0, Math.max(0, kept - prefix.length))).slice(0, kept);
  if (s.length < length) s = s.padEnd(length, "x");
  // Characters JSON escapes take more than one.
  charge(budget, JSON.stringify(s).length - s.length - 2);
  return s;
}

/** A local `$ref` (`#/$defs/x`, `#/definitions/x`) in the root schema. */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(1).split("/").filter(Boolean)) {
    if (!isRecord(node)) return undefined;
    const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
    node = Object.hasOwn(node, key) ? node[key] : undefined;
  }
  return node;
}
