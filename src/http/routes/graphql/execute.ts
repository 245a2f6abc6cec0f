import {
  GraphQLError,
  execute,
  getOperationAST,
  parse,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type ValidationRule,
} from "graphql";
import { asEmulatorError, toProblem } from "../../problem.js";
import { queryCost } from "./cost.js";

/**
 * minipod's bounds on a GraphQL request, so that no query a client can send costs more than a
 * small answer (the service does not publish its own). Each refusal is a 400 naming the bound.
 */
export const GRAPHQL_LIMITS = {
  /** Characters of the query text. */
  queryChars: 100_000,
  /** Tokens the parser reads before it gives up. */
  tokens: 20_000,
  /**
   * Nested selection sets, fragments followed (`myself { pods { machine { ... } } }` is 3). The
   * standard introspection query (graphql-js's, GraphiQL's) nests 13 deep with its type references.
   */
  depth: 20,
  /** Fields selected in all, aliases and fragment spreads counted each time they are used. */
  fields: 2_000,
} as const;

/** What a request asks: the query text, its variables and the operation to run. */
export interface GraphQLRequest {
  query: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** The answer: an HTTP status and the GraphQL response body. */
export interface GraphQLAnswer {
  status: 200 | 400;
  body: { data?: unknown; errors?: GraphQLFormattedError[] };
}

/** A document ready to run, or the 400 that refuses it. */
export type Prepared = { document: DocumentNode; operation: OperationDefinitionNode } | { refused: GraphQLAnswer };

const refuse = (message: string, code: string, errors: readonly GraphQLError[] = []): { refused: GraphQLAnswer } => ({
  refused: { status: 400, body: { errors: errors.length ? errors.map((e) => ({ ...e.toJSON(), extensions: { ...e.extensions, code } })) : [{ message, extensions: { code } }] } },
});

/** Parses and validates a request against the schema and the bounds; no resolver runs. */
export function prepare(schema: GraphQLSchema, req: GraphQLRequest): Prepared {
  if (typeof req.query !== "string" || req.query.trim() === "") return refuse('expected "query": the GraphQL document, as a string', "BAD_REQUEST");
  if (req.variables !== undefined && req.variables !== null && (typeof req.variables !== "object" || Array.isArray(req.variables))) return refuse('"variables" must be an object', "BAD_REQUEST");
  if (req.operationName !== undefined && req.operationName !== null && typeof req.operationName !== "string") return refuse('"operationName" must be a string', "BAD_REQUEST");
  if (req.query.length > GRAPHQL_LIMITS.queryChars) return refuse(`the query is ${req.query.length} characters; minipod takes at most ${GRAPHQL_LIMITS.queryChars}`, "QUERY_TOO_LARGE");
  const known = checked.get(schema);
  const document = known?.get(req.query) ?? parsedAndValid(schema, req.query, known);
  if ("refused" in document) return document;
  const operation = getOperationAST(document, (req.operationName as string | null | undefined) ?? undefined);
  if (!operation)
    return refuse(req.operationName ? `no operation named "${String(req.operationName)}" in the document` : "the document has several operations: name the one to run (operationName)", "BAD_REQUEST");
  return { document, operation };
}

/**
 * Documents that parsed and validated, by their text, per schema: a client sends the same few
 * queries again and again, and parsing and validating cost more than running them. Bounded; the
 * oldest entry goes first.
 */
const checked = new WeakMap<GraphQLSchema, Map<string, DocumentNode>>();
const CHECKED_MAX = 200;

function parsedAndValid(schema: GraphQLSchema, query: string, known: Map<string, DocumentNode> | undefined): DocumentNode | { refused: GraphQLAnswer } {
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: GRAPHQL_LIMITS.tokens });
  } catch (e) {
    return refuse((e as Error).message, "GRAPHQL_PARSE_FAILED", e instanceof GraphQLError ? [e] : []);
  }
  // The bounds first: the standard rules' cost grows with the document.
  const bounds = validate(schema, document, [depthAndSize]);
  if (bounds.length) return refuse(bounds[0]!.message, "QUERY_TOO_COMPLEX", bounds);
  // Then the cost (fields × the sizes of the lists they are under), walked once the walk is small.
  const cost = validate(schema, document, [queryCost]);
  if (cost.length) return refuse(cost[0]!.message, "QUERY_TOO_COMPLEX", cost);
  const errors = validate(schema, document, undefined, { maxErrors: 20 });
  if (errors.length) return refuse(errors[0]!.message, "GRAPHQL_VALIDATION_FAILED", errors);
  const cache = known ?? new Map<string, DocumentNode>();
  if (!known) checked.set(schema, cache);
  if (cache.size >= CHECKED_MAX) cache.delete(cache.keys().next().value!);
  cache.set(query, document);
  return document;
}

/** A resolver's failure that is the request's, not the field's: what HTTP answers on its own (a full disk, 507; minipod's own fault, 500; 503, 429). */
function requestWide(err: unknown): boolean {
  if (err === undefined || err instanceof GraphQLError) return false;
  const status = toProblem(err).problem.status;
  return status >= 500 || status === 429;
}

/**
 * Runs a prepared document. What a resolver refuses (an unknown pod, an invalid input) is an entry
 * of `errors[]` in a 200, with the model's own message and its code in `extensions`; variables
 * that do not fit their types are a 400. A failure of the request's own (`requestWide`) when no
 * field has data is returned as `failure`, for the route to answer as REST answers the same cause
 * (a full disk: 507 with Retry-After); beside fields that have data, it is an entry of `errors[]`
 * too, and `failed` logs it (a full disk once per 10 s, a fault of minipod's with its stack).
 */
export async function run(
  schema: GraphQLSchema,
  p: { document: DocumentNode; operation: OperationDefinitionNode },
  req: GraphQLRequest,
  caller: { key: string | undefined; origin?: string | undefined },
  failed: (err: unknown) => void,
): Promise<GraphQLAnswer | { failure: unknown }> {
  const result: ExecutionResult = await execute({
    schema,
    document: p.document,
    variableValues: (req.variables as Record<string, unknown> | null | undefined) ?? undefined,
    operationName: (req.operationName as string | null | undefined) ?? undefined,
    contextValue: caller,
  });
  // No data at all: the variables did not fit (execution never started).
  if (!("data" in result) || result.data === undefined)
    return { status: 400, body: { errors: result.errors?.map(format).map((e) => ({ ...e, extensions: { code: "BAD_USER_INPUT", ...e.extensions } })) ?? [] } };
  const failures = result.errors?.map((e) => e.originalError).filter(requestWide) ?? [];
  if (failures.length > 0 && (result.data === null || Object.values(result.data).every((v) => v === null))) return { failure: failures[0] };
  for (const f of failures) failed(f);
  const errors = result.errors?.map(format);
  return { status: 200, body: errors ? { errors, data: result.data } : { data: result.data } };
}

function format(e: GraphQLError): GraphQLFormattedError {
  const json = e.toJSON();
  const original = e.originalError;
  if (original === undefined || original instanceof GraphQLError) return json;
  const known = asEmulatorError(original);
  if (known) return { ...json, message: known.message, extensions: { code: known.code, ...(known.errors ? { errors: known.errors } : {}) } };
  return { ...json, message: "internal error (logged by minipod)", extensions: { code: "INTERNAL_SERVER_ERROR" } };
}

/** Refuses a document nested deeper, or selecting more fields, than `GRAPHQL_LIMITS` allows. */
const depthAndSize: ValidationRule = (context) => {
  const fragments = new Map(context.getDocument().definitions.flatMap((d) => (d.kind === "FragmentDefinition" ? [[d.name.value, d] as const] : [])));
  let fields = 0;
  let reported = false;
  type Selections = ReadonlyArray<import("graphql").SelectionNode>;
  const walk = (selections: Selections, depth: number, seen: ReadonlySet<string>): void => {
    if (reported) return;
    if (depth > GRAPHQL_LIMITS.depth) {
      reported = true;
      context.reportError(new GraphQLError(`the query nests ${depth} levels deep; minipod takes at most ${GRAPHQL_LIMITS.depth}`));
      return;
    }
    for (const s of selections) {
      if (s.kind === "Field") {
        fields += 1;
        if (fields > GRAPHQL_LIMITS.fields) {
          reported = true;
          context.reportError(
            new GraphQLError(`the query selects more than ${GRAPHQL_LIMITS.fields} fields (aliases and fragments counted where used); minipod takes at most ${GRAPHQL_LIMITS.fields}`),
          );
          return;
        }
        if (s.selectionSet) walk(s.selectionSet.selections, depth + 1, seen);
      } else if (s.kind === "InlineFragment") {
        walk(s.selectionSet.selections, depth, seen);
      } else {
        const f = fragments.get(s.name.value);
        // A fragment that spreads itself is refused by validation already; `seen` keeps this walk finite.
        if (f && !seen.has(f.name.value)) walk(f.selectionSet.selections, depth, new Set([...seen, f.name.value]));
      }
      if (reported) return;
    }
  };
  return {
    OperationDefinition(node) {
      walk(node.selectionSet.selections, 1, new Set());
    },
  };
};

