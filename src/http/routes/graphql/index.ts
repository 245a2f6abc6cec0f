import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { EmulatorError } from "../../../domain/errors.js";
import { authenticate, authorize } from "../../auth.js";
import { jsonBody } from "../../body.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { restQuota } from "../../rate-limit.js";
import { ERROR_RESPONSES, problem } from "../../schemas.js";
import type { ServiceRoute } from "../../surfaces.js";
import { prepare, run, type GraphQLAnswer, type GraphQLRequest } from "./execute.js";

const TAG = "GraphQL";

/** Bytes of a POST body (the query text is bounded again, in characters, by `GRAPHQL_LIMITS`). */
export const GRAPHQL_BODY_MAX_BYTES = 1024 * 1024;

const ResponseSchema = z
  .object({
    data: z.record(z.string(), z.unknown()).nullable().optional(),
    errors: z.array(z.object({ message: z.string(), path: z.array(z.union([z.string(), z.number()])).optional(), extensions: z.record(z.string(), z.unknown()).optional() })).optional(),
  })
  .openapi("GraphQLResponse");

const DESCRIPTION =
  "The service's GraphQL API, which its Python library (`runpod.api`), CLI and MCP server call. The schema (types and fields) is at `/docs/graphql` and by introspection. " +
  "A key in `Authorization: Bearer` or `?api_key=`; the public catalog (gpuTypes, dataCenters, serverlessGpuPools) needs none. " +
  "What a resolver refuses is HTTP 200 with `errors[]`; a document that does not parse, validate or fit minipod's bounds is 400; a bad key is 401.";

const responses = {
  200: { description: "Executed: `data`, and `errors[]` for the fields refused", content: { "application/json": { schema: ResponseSchema } } },
  400: { description: "Not parsed, not valid, too deep or too big, or variables of the wrong type: `errors[]` only", content: { "application/json": { schema: ResponseSchema } } },
  401: ERROR_RESPONSES[401],
  403: ERROR_RESPONSES[403],
  429: ERROR_RESPONSES[429],
};

const post = createRoute({
  method: "post",
  path: "/graphql",
  operationId: "graphql",
  tags: [TAG],
  summary: "Run a GraphQL query or mutation",
  description: `${DESCRIPTION} The body: ${JSON.stringify({ query: "{ myself { pods { id desiredStatus } } }", variables: {} })}.`,
  request: { query: z.object({ api_key: z.string().optional().openapi({ description: "The API key, as the service's CLI sends it" }) }) },
  // Read by the app's checked route under this limit, its bytes counted against memory.requestBodyBytes
  // as every REST body's are; parsed here, so a body that is not JSON gets GraphQL's errors[].
  middleware: [jsonBody(GRAPHQL_BODY_MAX_BYTES)],
  responses: { ...responses, 413: problem("The body passes 1 MiB") },
});

const get = createRoute({
  method: "get",
  path: "/graphql",
  operationId: "graphqlGet",
  tags: [TAG],
  summary: "Run a GraphQL query (GET)",
  description: `${DESCRIPTION} Queries only: a mutation over GET is refused with 405.`,
  request: {
    query: z.object({
      query: z.string().optional().openapi({ description: "The GraphQL document" }),
      variables: z.string().optional().openapi({ description: "A JSON object" }),
      operationName: z.string().optional(),
      api_key: z.string().optional(),
    }),
  },
  responses: { ...responses, 405: problem("A mutation sent with GET") },
});

/**
 * `POST /graphql` and `GET /graphql`. Authentication, the REST quota and scopes are the REST
 * surface's own steps (auth.ts, rate-limit.ts), taken here because the path is not under /v1 or
 * /v2: a key is authenticated (401), counted against its REST quota (429), then needs
 * `rest:write` for a mutation and `rest:read` for a query (403). With no key at all, only the
 * public fields answer; the account's answer `errors[]` (UNAUTHENTICATED).
 */
export function graphqlRoutes(core: Pick<Core, "auth" | "failures" | "graphqlSchema" | "rateLimits">, app: OpenAPIHono<AppEnv>): void {
  const quota = restQuota(core);

  const answer = async (c: Context<AppEnv>, req: GraphQLRequest, method: "GET" | "POST"): Promise<never> => {
    const key = keyOf(c);
    const rest = (scope: ServiceRoute["scope"]): ServiceRoute => ({ surface: "rest", scope, endpointId: undefined, operation: undefined });
    const caller = key === undefined ? undefined : authenticate(key, c, core.auth, rest("rest:read"));
    if (caller) quota(c, caller);
    const schema = core.graphqlSchema();
    const prepared = prepare(schema, req);
    if ("refused" in prepared) return reply(c, prepared.refused);
    const mutation = prepared.operation.operation !== "query";
    if (mutation && method === "GET") {
      c.header("allow", "POST");
      throw new EmulatorError("METHOD_NOT_ALLOWED", `a ${prepared.operation.operation} is sent with POST /graphql; GET runs queries only`);
    }
    if (caller) authorize(method, "/graphql", { ...caller, route: rest(mutation ? "rest:write" : "rest:read") });
    const answered = await run(schema, prepared, req, { key: caller?.key, origin: new URL(c.req.url).origin }, (err) => core.failures.failed(method, "/graphql", err));
    // Answered by the app's error handler, as REST answers the same cause (and logged there).
    if ("failure" in answered) throw answered.failure;
    return reply(c, answered);
  };

  app.openapi(post, async (c) => {
    const text = await c.req.text();
    let req: GraphQLRequest;
    try {
      req = JSON.parse(text) as GraphQLRequest;
    } catch (e) {
      return reply(c, { status: 400, body: { errors: [{ message: `the body is not JSON: ${(e as Error).message}`, extensions: { code: "BAD_REQUEST" } }] } });
    }
    if (typeof req !== "object" || req === null || Array.isArray(req))
      return reply(c, { status: 400, body: { errors: [{ message: 'expected a JSON object: {"query": "...", "variables": {...}}', extensions: { code: "BAD_REQUEST" } }] } });
    return answer(c, req, "POST");
  });

  app.openapi(get, (c) => {
    const q = c.req.query();
    let variables: unknown;
    try {
      variables = q.variables === undefined ? undefined : JSON.parse(q.variables);
    } catch {
      return reply(c, { status: 400, body: { errors: [{ message: "variables: expected a JSON object", extensions: { code: "BAD_REQUEST" } }] } });
    }
    return answer(c, { query: q.query, variables, operationName: q.operationName }, "GET");
  });
}

/**
 * The key as `authenticate` reads it (an Authorization header), from the header or `?api_key=`;
 * undefined when neither is sent. An empty or malformed one is refused there (401).
 */
function keyOf(c: Context<AppEnv>): string | undefined {
  const header = c.req.header("authorization");
  if (header !== undefined) return header;
  const key = c.req.query("api_key");
  return key === undefined ? undefined : `Bearer ${key}`;
}

// Typed as never: the routes' typed answers are declared above; this one body serves each status.
const reply = (c: Context<AppEnv>, a: GraphQLAnswer): never => c.json(a.body as Record<string, unknown>, a.status) as never;
