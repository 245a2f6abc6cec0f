import { GraphQLError, GraphQLScalarType, Kind, buildSchema, isObjectType, type GraphQLFieldResolver, type GraphQLSchema, type ValueNode } from "graphql";
import type { z } from "@hono/zod-openapi";
import { GRAPHQL_COST_EXTENSION, type GraphQLFieldCost } from "../../domain/bounds.js";
import { EmulatorError } from "../../domain/errors.js";
import type { ViewContext } from "./service.js";
import { EMULATOR_USER_ID } from "./user.js";

/**
 * The GraphQL view of the management resources (`POST /graphql`, the service's older API that its
 * Python library, CLI and MCP server still call). Like REST v1 and v2 it is a view: each service
 * declares its part (SDL and resolvers over its own models) in its folder, and the schema is the
 * sum of the parts of the list of services (`assembleSchema`). No rule lives here.
 */

/** Who asks: the API key when one was sent (public catalog fields need none). */
export interface GraphQLCaller {
  key: string | undefined;
  /** The origin the request was sent to (`http://127.0.0.1:8080`): what URLs minipod hands out are built on. */
  origin?: string | undefined;
}

/** A resolver of one field: (parent, args, caller). */
export type FieldResolver = GraphQLFieldResolver<unknown, GraphQLCaller, Record<string, unknown>>;

/** Resolvers by type name, then field name. */
export type Resolvers = Record<string, Record<string, FieldResolver>>;

/**
 * A service's part of the schema: its SDL (types, and `extend type Query/Mutation/User`) and its
 * resolvers over `V`, what they read of the registry and the engine (`Pick<ViewContext, ...>`).
 */
export interface GraphQLPart<V> {
  typeDefs: string;
  resolvers(views: V): Resolvers;
  /** Custom scalars it declares (`scalar X` in its SDL), by name. */
  scalars?: readonly GraphQLScalarType[];
  /**
   * What its fields cost ("Type.field" → the items of a list, where known, else 10; the weight of
   * a resolver that computes, where a plain field is 1), as the query cost counts them.
   */
  cost?: Readonly<Record<string, GraphQLFieldCost>>;
}

/** What every part extends: the roots, and the account (`myself`). */
const BASE = /* GraphQL */ `
"""Nothing: what the service answers for a mutation that returns no object."""
scalar Void

"""One environment variable."""
type EnvironmentVariable { key: String!  value: String }
input EnvironmentVariableInput { key: String!  value: String }

type Query {
  """The account of the API key (null without one)."""
  myself: User
}
type Mutation
"""The account. Each resource adds its list (pods, endpoints, networkVolumes...)."""
type User { id: String! }
`;

const VOID = new GraphQLScalarType({ name: "Void", serialize: () => null, parseValue: () => null, parseLiteral: () => null });

/**
 * Builds the executable schema from the services' parts: their SDL joined to the base and each
 * field given its resolver. A resolver named for a field the SDL does not declare is a bug in that
 * service's part, reported at start.
 */
export function assembleSchema(parts: ReadonlyArray<{ name: string; graphql?: GraphQLPart<ViewContext> | undefined }>, views: ViewContext): GraphQLSchema {
  const withParts = parts.filter((p): p is { name: string; graphql: GraphQLPart<ViewContext> } => p.graphql !== undefined);
  const schema = buildSchema([BASE, ...withParts.map((p) => p.graphql.typeDefs)].join("\n"));
  const scalars = [VOID, ...withParts.flatMap((p) => p.graphql.scalars ?? [])];
  for (const s of scalars) {
    const declared = schema.getType(s.name);
    if (!(declared instanceof GraphQLScalarType)) throw new Error(`graphql: scalar ${s.name} is not declared`);
    Object.assign(declared, { serialize: s.serialize, parseValue: s.parseValue, parseLiteral: s.parseLiteral });
  }
  const all: Resolvers = { User: { id: () => EMULATOR_USER_ID } };
  for (const p of withParts) {
    for (const [type, fields] of Object.entries(p.graphql.resolvers(views))) all[type] = { ...all[type], ...fields };
  }
  all.Query = { ...all.Query, myself: (_p, _a, caller) => (signedIn(caller), {}) };
  for (const [typeName, fields] of Object.entries(all)) {
    const type = schema.getType(typeName);
    if (!isObjectType(type)) throw new Error(`graphql: resolvers for ${typeName}, which is not an object type`);
    const declared = type.getFields();
    for (const [name, resolve] of Object.entries(fields)) {
      const field = declared[name];
      if (!field) throw new Error(`graphql: resolver for ${typeName}.${name}, which the schema does not declare`);
      field.resolve = resolve;
    }
  }
  for (const p of withParts) {
    for (const [path, cost] of Object.entries(p.graphql.cost ?? {})) {
      const [typeName, name] = path.split(".") as [string, string];
      const type = schema.getType(typeName);
      const field = isObjectType(type) ? type.getFields()[name] : undefined;
      if (!field) throw new Error(`graphql: a cost for ${path}, which the schema does not declare`);
      field.extensions = { ...field.extensions, [GRAPHQL_COST_EXTENSION]: cost };
    }
  }
  return schema;
}

/** Refuses a field of the account to a caller who sent no key (the public catalog needs none). */
export function signedIn(caller: GraphQLCaller): string {
  if (caller.key === undefined) throw new GraphQLError("Unauthorized: this field needs an API key (Authorization: Bearer <key> or ?api_key=<key>)", { extensions: { code: "UNAUTHENTICATED" } });
  return caller.key;
}

/** A resolver of the account's: refused without a key. */
export const authed =
  <A extends Record<string, unknown>, R>(fn: (args: A, parent: unknown) => R): FieldResolver =>
  (parent, args, caller) => {
    signedIn(caller);
    return fn(args as A, parent);
  };

/** An input the resolver refuses, as the models word their own refusals (`$.field: ...`). */
export function badInput(errors: string[]): EmulatorError {
  return new EmulatorError("VALIDATION_FAILED", `the input is invalid: ${errors.join("; ")}`, { errors });
}

/**
 * Checks an input, once in the models' terms, against the REST body schema that takes the same
 * fields (v1's): the bounds and enums of a field are written once, there, and refuse a GraphQL
 * input as they refuse a REST body. Fields REST does not know are left to the model.
 */
export function conforms(schema: z.ZodType, value: Record<string, unknown>): void {
  const defined = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null));
  const result = schema.safeParse(defined);
  if (!result.success) {
    const errors = result.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "input"}: ${i.message}`);
    throw badInput(errors);
  }
}

/** `""` and null as the service's clients send for "not given". */
export const given = (s: string | null | undefined): string | undefined => (s === null || s === undefined || s === "" ? undefined : s);

/** "a,b, c" → ["a","b","c"]; empty → undefined. */
export const commaList = (s: string | null | undefined): string[] | undefined => {
  const items = (s ?? "").split(",").map((x) => x.trim()).filter((x) => x !== "");
  return items.length ? items : undefined;
};

/** `[{key, value}]` → a record. */
export const envRecord = (env: ReadonlyArray<{ key: string; value?: string | null }> | null | undefined): Record<string, string> | undefined =>
  env ? Object.fromEntries(env.map((e) => [e.key, e.value ?? ""])) : undefined;

/** A record → `[{key, value}]`. */
export const envList = (env: Record<string, string>): Array<{ key: string; value: string }> => Object.entries(env).map(([key, value]) => ({ key, value }));

/** The service's one-string `dockerArgs` as the models' command array, and back. */
export const argsOf = (s: string | null | undefined): string[] | undefined => (s === null || s === undefined ? undefined : s.split(/\s+/).filter((x) => x !== ""));
export const argsText = (cmd: readonly string[]): string => cmd.join(" ");

/**
 * A scalar taking one of a few names, written either bare (`cloudType: ALL`, as the Python library
 * interpolates it) or quoted (`"ALL"`, as variables carry it); `""` reads as not given. The
 * service's clients do both for the same field.
 */
export function nameScalar(name: string, values: readonly string[], description: string): GraphQLScalarType {
  const check = (v: unknown): string | null => {
    if (v === "" || v === null) return null;
    if (typeof v !== "string" || !values.includes(v)) throw new GraphQLError(`${name}: expected one of ${values.join(", ")}, got ${JSON.stringify(v)}`);
    return v;
  };
  return new GraphQLScalarType({
    name,
    description,
    serialize: (v) => v,
    parseValue: check,
    parseLiteral: (ast: ValueNode) => {
      if (ast.kind === Kind.ENUM || ast.kind === Kind.STRING) return check(ast.value);
      if (ast.kind === Kind.NULL) return null;
      throw new GraphQLError(`${name}: expected one of ${values.join(", ")}`);
    },
  });
}
