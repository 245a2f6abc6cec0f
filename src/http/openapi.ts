import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.js";

const SERVICE_PATH = /^\/v[12]\//;

/**
 * The groups of the document, in the order `/docs` shows them: what a client of a queue endpoint
 * reaches for first, then the OpenAI routes and the worker side, then the management resources,
 * and what only the emulator has last. Every tag a route uses is listed here (a test says so).
 */
export const TAG_ORDER: ReadonlyArray<{ name: string; description: string }> = [
  { name: "Queue", description: "A queue endpoint's operations, `/v2/{endpoint_id}/...`: submit, status, stream, cancel, retry, purge, health." },
  { name: "OpenAI-compatible", description: "`/v2/{endpoint_id}/openai/*`: OpenAI requests, answered as jobs of the endpoint." },
  {
    name: "Batches",
    description: "A queue endpoint's batch jobs, `/v2/{endpoint_id}/batch/...`: a DRAFT of requests, finalized and run on the endpoint's batch workers; counters, paged results, cancel.",
  },
  { name: "Worker protocol", description: "What worker processes of an `external` endpoint call: job-take, job-done, job-stream, job-stop, ping." },
  {
    name: "Load balancing",
    description: "A load-balancing endpoint's requests, `/lb/{endpoint_id}/*` (or `http://{endpoint_id}.localhost:PORT/*`): any method and path, answered by one of its workers' HTTP servers.",
  },
  { name: "Serverless", description: "REST v2: endpoints, their workers, releases and logs." },
  { name: "Endpoints", description: "REST v1: endpoints." },
  { name: "Templates", description: "Templates (v2 and v1)." },
  { name: "Pods", description: "Pods (v2 and v1)." },
  { name: "Clusters", description: "Clusters of pods (v2)." },
  { name: "Network volumes", description: "Network volumes (v2 and v1)." },
  { name: "Registries", description: "Container registry credentials and ECR delegations (v2)." },
  { name: "Container registry auths", description: "Container registry credentials (v1)." },
  { name: "Catalog", description: "GPU types, CPU flavors, data centers and public templates (v2)." },
  { name: "Billing", description: "Billing records by bucket (v2 and v1)." },
  { name: "Account", description: "The account's SSH keys (v2)." },
  { name: "GraphQL", description: "The service's GraphQL API, `/graphql`, which its Python library, CLI and MCP server call: the same resources as REST (explorer: `/docs/graphql`)." },
  {
    name: "Flash builds",
    description: "The artifact upload URL `prepareFlashArtifactUpload` hands out (a PUT with no key), and its download, from which a deployed Flash app's workers fetch their build.",
  },
  { name: "Dashboard", description: "The dashboard and these API docs: emulator-only pages." },
  { name: "Emulator control", description: "The emulator's own control API, `/_emulator/*`: clock, reset, faults, journal, timelines, snapshots, worker processes." },
];

/** The parts of a generated document (3.0 or 3.1) that `arrange` completes. */
interface Document {
  components?: { securitySchemes?: Record<string, unknown> };
  tags?: Array<{ name: string; description?: string }>;
  paths?: Record<string, object | undefined>;
}

/**
 * Serves `/openapi.json` (OpenAPI 3.1): every route declared with createRoute, with the API key
 * scheme on the service routes (`/v1`, `/v2`; the control API needs none). Built once, on first
 * request. `/docs/openapi-3.0.json` is the same routes from the same schemas, written as OpenAPI
 * 3.0 by the library's 3.0 generator (`nullable` for a null type), which is what `/docs` shows:
 * Swagger UI 5 runs a 3.1 document through its ApiDOM resolver, which rebuilds the whole
 * document for every operation opened (about a second each here, several under load) and takes
 * three to four times longer to draw the page; a 3.0 document it resolves in place.
 */
export function serveOpenApi(app: OpenAPIHono<AppEnv>, version: string): void {
  const info = {
    title: "minipod",
    version,
    description:
      "A local emulator of a serverless job-queue service: the queue operations and worker routes under /v2/{endpoint_id}, the REST surface under /v1 and /v2, and the emulator's own control API under /_emulator.",
  };
  let doc: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.get("/openapi.json", (c) => c.json((doc ??= arrange(app.getOpenAPI31Document({ openapi: "3.1.0", info })))));
  let doc30: ReturnType<typeof app.getOpenAPIDocument> | undefined;
  app.get("/docs/openapi-3.0.json", (c) => c.json((doc30 ??= arrange(app.getOpenAPIDocument({ openapi: "3.0.3", info })))));
}

/** Adds the key scheme, and orders the groups and paths as /docs shows them (TAG_ORDER). */
function arrange<D extends Document>(d: D): D {
  d.components ??= {};
  d.components.securitySchemes = {
    apiKey: {
      type: "http",
      scheme: "bearer",
      description: "Authorization: Bearer <API key>. Queue operations and worker routes also accept the bare key.",
    },
  };
  // Groups in TAG_ORDER, and the paths in the same order, so that the queue comes first.
  const rank = (tag: string | undefined) => {
    const i = TAG_ORDER.findIndex((g) => g.name === tag);
    return i === -1 ? TAG_ORDER.length : i;
  };
  const used = new Set(Object.values(d.paths ?? {}).flatMap((item) => Object.values(item ?? {}).flatMap((op) => (op as { tags?: string[] } | undefined)?.tags ?? [])));
  d.tags = [...TAG_ORDER.filter((g) => used.has(g.name)), ...[...used].filter((t) => rank(t) === TAG_ORDER.length).map((name) => ({ name }))];
  const pathRank = (item: object | undefined) => Math.min(...Object.values(item ?? {}).map((op) => rank((op as { tags?: string[] } | undefined)?.tags?.[0])));
  d.paths = Object.fromEntries(Object.entries(d.paths ?? {}).sort(([, a], [, b]) => pathRank(a) - pathRank(b)));
  for (const [path, item] of Object.entries(d.paths ?? {})) {
    if (!SERVICE_PATH.test(path) || !item) continue;
    for (const method of ["get", "post", "put", "patch", "delete"] as const) {
      const op = (item as Partial<Record<string, { security?: unknown }>>)[method];
      if (op) op.security = [{ apiKey: [] }];
    }
  }
  return d;
}
