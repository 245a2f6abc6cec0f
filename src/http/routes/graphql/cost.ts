import {
  GraphQLError,
  getNamedType,
  getNullableType,
  isLeafType,
  isListType,
  isObjectType,
  isInterfaceType,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionNode,
  type ValidationRule,
  SchemaMetaFieldDef,
  TypeMetaFieldDef,
  TypeNameMetaFieldDef,
} from "graphql";
import { GRAPHQL_COST_EXTENSION, type GraphQLFieldCost } from "../../../domain/bounds.js";

/**
 * What a query may cost: fields resolved, each counted once per item of every list it is under,
 * a list counted at its expected size. The bound keeps the most expensive query accepted under
 * 50 ms of CPU on a quiet 2-core machine (bench/graphql.ts measures it; docs/graphql.md has the
 * figures); the standard introspection query and every query of the service's clients cost far less.
 */
export const GRAPHQL_MAX_COST = 25_000;

/** Items expected of a list the schema gives no size for (an account's pods, endpoints, templates...). */
export const DEFAULT_LIST_SIZE = 10;

/**
 * Sizes of the introspection lists of a schema, from its real counts: its types and directives,
 * and the mean fields, arguments, values... of a type (so the standard introspection query, all
 * types with all their fields, costs what it reads).
 */
const introspectionSizes = new WeakMap<GraphQLSchema, Record<string, number>>();

function sizesOf(schema: GraphQLSchema): Record<string, number> {
  let sizes = introspectionSizes.get(schema);
  if (sizes) return sizes;
  const types = Object.values(schema.getTypeMap());
  const fields = types.flatMap((t) => ("getFields" in t ? Object.values(t.getFields()) : []));
  const mean = (count: number, of: number) => Math.max(1, Math.ceil(count / Math.max(1, of)));
  const sum = (f: (t: (typeof types)[number]) => number) => types.reduce((n, t) => n + f(t), 0);
  sizes = {
    "__Schema.types": types.length,
    "__Schema.directives": schema.getDirectives().length,
    "__Type.fields": mean(fields.length, types.length),
    "__Type.inputFields": mean(fields.length, types.length),
    "__Type.enumValues": mean(sum((t) => ("getValues" in t ? t.getValues().length : 0)), types.length),
    "__Type.interfaces": mean(sum((t) => ("getInterfaces" in t ? t.getInterfaces().length : 0)), types.length),
    "__Type.possibleTypes": mean(sum((t) => ("getTypes" in t ? t.getTypes().length : 0)), types.length),
    "__Field.args": mean(fields.reduce((n, f) => n + ("args" in f ? f.args.length : 0), 0), fields.length),
    "__Directive.args": mean(schema.getDirectives().reduce((n, d) => n + d.args.length, 0), schema.getDirectives().length),
    "__Directive.locations": 4,
  };
  introspectionSizes.set(schema, sizes);
  return sizes;
}

/** What a part of the schema declares a field costs. */
const declared = (field: GraphQLField<unknown, unknown>): GraphQLFieldCost => (field.extensions?.[GRAPHQL_COST_EXTENSION] as GraphQLFieldCost | undefined) ?? {};

/** The expected items of a list field of `parent`. */
function listSize(schema: GraphQLSchema, parent: GraphQLCompositeType, field: GraphQLField<unknown, unknown>): number {
  return declared(field).items ?? sizesOf(schema)[`${parent.name}.${field.name}`] ?? DEFAULT_LIST_SIZE;
}

/**
 * What resolving a field once costs: 1, a resolver's declared weight, or a quarter for the
 * introspection types' fields (reads of the schema in memory: the standard introspection query
 * measured 0.3 µs a field, the service's fields 1 to 1.5).
 */
const weightOf = (parent: GraphQLCompositeType, field: GraphQLField<unknown, unknown>): number => declared(field).weight ?? (parent.name.startsWith("__") ? 0.25 : 1);

function fieldOf(schema: GraphQLSchema, parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === "__typename") return TypeNameMetaFieldDef;
  if (parent === schema.getQueryType() && name === "__schema") return SchemaMetaFieldDef;
  if (parent === schema.getQueryType() && name === "__type") return TypeMetaFieldDef;
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
}

/**
 * The cost of an operation as {@link GRAPHQL_MAX_COST} counts it; fields the schema does not know
 * cost 1 (validation refuses them). Walked only once the document is within the bounds of fields
 * and depth, so the walk itself is small.
 */
export function operationCost(schema: GraphQLSchema, root: GraphQLCompositeType, selections: readonly SelectionNode[], fragments: ReadonlyMap<string, FragmentDefinitionNode>): number {
  let cost = 0;
  const walk = (parent: GraphQLCompositeType | undefined, nodes: readonly SelectionNode[], times: number, seen: ReadonlySet<string>): void => {
    for (const s of nodes) {
      if (s.kind === "Field") {
        const field = parent && fieldOf(schema, parent, s.name.value);
        if (!field) {
          cost += times;
          continue;
        }
        cost += times * weightOf(parent, field);
        const type = getNullableType(field.type);
        const items = isListType(type) ? listSize(schema, parent, field) : 1;
        const named = getNamedType(field.type);
        if (isLeafType(named)) {
          if (items > 1) cost += times * items * weightOf(parent, field);
        } else if (s.selectionSet) walk(named as GraphQLCompositeType, s.selectionSet.selections, times * items, seen);
      } else if (s.kind === "InlineFragment") {
        const on = s.typeCondition ? (schema.getType(s.typeCondition.name.value) as GraphQLCompositeType | undefined) : parent;
        walk(on, s.selectionSet.selections, times, seen);
      } else {
        const f = fragments.get(s.name.value);
        if (f && !seen.has(f.name.value)) walk(schema.getType(f.typeCondition.name.value) as GraphQLCompositeType | undefined, f.selectionSet.selections, times, new Set([...seen, f.name.value]));
      }
    }
  };
  walk(root, selections, 1, new Set());
  return Math.ceil(cost);
}

/** Refuses an operation that costs more than {@link GRAPHQL_MAX_COST}, naming its cost and the bound. */
export const queryCost: ValidationRule = (context) => {
  const schema = context.getSchema();
  const fragments = new Map(context.getDocument().definitions.flatMap((d) => (d.kind === "FragmentDefinition" ? [[d.name.value, d] as const] : [])));
  return {
    OperationDefinition(node) {
      const root = node.operation === "mutation" ? schema.getMutationType() : node.operation === "subscription" ? schema.getSubscriptionType() : schema.getQueryType();
      if (!root) return;
      const cost = operationCost(schema, root, node.selectionSet.selections, fragments);
      if (cost > GRAPHQL_MAX_COST) {
        context.reportError(
          new GraphQLError(
            `the query costs ${cost.toLocaleString("en-US")} (fields resolved, each counted once per item of the lists it is under: ${DEFAULT_LIST_SIZE} items a list, a catalog's lists their real size; gpuTypes.lowestPrice 15 a field); minipod takes at most ${GRAPHQL_MAX_COST.toLocaleString("en-US")}: select fewer fields or aliases`,
          ),
        );
      }
    },
  };
};
