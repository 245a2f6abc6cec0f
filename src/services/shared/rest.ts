import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { MANAGEMENT_BODY_MAX_BYTES } from "../../domain/limits.js";
import { jsonBody } from "../../http/body.js";
import type { CheckHook } from "../../http/checked-routes.js";
import type { AppEnv } from "../../http/env.js";
import { ERROR_RESPONSES, json, problem } from "../../http/schemas.js";

/**
 * The REST surface declares each resource once, for both versions.
 *
 * A resource is one model in the domain (one service, one store) and a thin view per REST
 * version: the version's paths, operation ids, body schemas, the shape a model is shown in, and
 * how a body becomes a domain call. What every resource does the same way (list, create, get,
 * update, delete, their statuses, list envelopes, the v1 `POST .../update` synonym, the 404 of
 * an unknown id, the body limit) is written here once, by version: `V1` and `V2`. A new field is
 * one edit to the model and one to each view's schema and `show`; a new resource is one
 * `ResourceRoutes` declaration. Routes beyond those five (pod actions, logs, workers) stay plain
 * `createRoute` declarations beside the resource.
 */

/** How one REST version names and answers what every resource does. */
export interface RestVersion {
  readonly prefix: "/v1" | "/v2";
  /** An operation id: `listNetworkVolumes` on v2, `ListNetworkVolumes` on v1. */
  operationId(verb: string, noun: string): string;
  /** Status of a created resource (v1 answers 200, pods aside; v2 201). */
  readonly createStatus: 200 | 201;
  /** v2 wraps lists in an object under the resource's key; v1 answers a bare array. */
  readonly wrapsLists: boolean;
  /** v1 offers every update as PATCH and as `POST {id}/update`. */
  readonly updateByPost: boolean;
}

export const V1: RestVersion = {
  prefix: "/v1",
  operationId: (verb, noun) => `${verb[0]!.toUpperCase()}${verb.slice(1)}${noun}`,
  createStatus: 200,
  wrapsLists: false,
  updateByPost: true,
};

export const V2: RestVersion = {
  prefix: "/v2",
  operationId: (verb, noun) => `${verb}${noun}`,
  createStatus: 201,
  wrapsLists: true,
  updateByPost: false,
};

export type Op = "list" | "get" | "create" | "update" | "delete";
type Ctx = Context<AppEnv>;
type Docs = { summary?: string; description?: string };

/** A body-carrying operation: its schema and what it does with the parsed body. */
export interface BodyOp<M, V> {
  schema: z.ZodType;
  run: (core: V, body: never, c: Ctx, id: string) => M | Promise<M>;
  /** Answers a failed check of the body in the route's own words (see `CheckHook`). */
  hook?: CheckHook;
}

/**
 * `create`/`update` of a view: the body's schema, and the domain call made with the parsed body
 * (and, for an update, the id of the path).
 */
export function withBody<S extends z.ZodType, M, V>(schema: S, run: (core: V, body: z.output<S>, c: Ctx, id: string) => M | Promise<M>, hook?: CheckHook): BodyOp<M, V> {
  return { schema, run: run as BodyOp<M, V>["run"], ...(hook ? { hook } : {}) };
}

/**
 * One version's view of a resource, over `V`: what its show, reads and body operations use of the
 * registry and the engine (`Pick<ViewContext, ...>`), so its reach is in its type.
 */
export interface ResourceView<M, V> {
  version: RestVersion;
  /** The collection's segment after the version: `networkvolumes`, `network-volumes`. */
  path: string;
  /** Name of the id in the item's path; default `id`. */
  idParam?: string;
  /** Operation-id nouns: `{ one: "NetworkVolume", many: "NetworkVolumes" }`. */
  names: { one: string; many: string };
  /** The list's key where the version wraps lists: `networkVolumes`. */
  listKey?: string;
  /** One resource as this version shows it (for the document). */
  schema: z.ZodType;
  show: (core: V, m: M, c: Ctx) => unknown;
  /** Query parameters of the list and of the get. */
  query?: { list?: z.ZodType; get?: z.ZodType };
  /** This version's own list or get, when it reads the query (filters, includes). */
  list?: (core: V, c: Ctx) => M[];
  get?: (core: V, id: string, c: Ctx) => M;
  create?: BodyOp<M, V>;
  update?: BodyOp<M, V>;
  /** Status of a create when it is not the version's usual one (v1 pods: 201). */
  createStatus?: 200 | 201;
  docs?: Partial<Record<Op, Docs>>;
  /** Operations this version does not offer for the resource. */
  omit?: readonly Op[];
}

/** What a view declares beyond its path, name and shape; `plural` when the name does not take an s. */
type ViewParts<M, V> = Omit<ResourceView<M, V>, "version" | "path" | "names" | "listKey" | "idParam" | "schema" | "show"> & { plural?: string };

const lowerFirst = (s: string) => s[0]!.toLowerCase() + s.slice(1);

/**
 * One version's view of a resource: the collection's path, the operation ids' noun
 * (`NetworkVolume`), the shape a model is shown in and how. What follows from the noun is not
 * written again: the plural (`NetworkVolumes`), v2's list key (`networkVolumes`), v1's id name
 * (`networkVolumeId`).
 */
export function view<M, V>(version: RestVersion, path: string, one: string, schema: z.ZodType, show: ResourceView<M, V>["show"], parts: ViewParts<M, V> = {}): ResourceView<M, V> {
  const { plural, ...rest } = parts;
  const many = plural ?? `${one}s`;
  const named = version.wrapsLists ? { listKey: lowerFirst(many) } : { idParam: `${lowerFirst(one)}Id` };
  return { version, path, names: { one, many }, schema, show, ...named, ...rest };
}

/** A resource of the REST surface: its shared reads and deletion, and a view per version. */
export interface ResourceRoutes<M, V> {
  tag: string;
  /** Singular, as summaries and messages say it: "network volume". */
  noun: string;
  /** Plural for summaries; default `${noun}s`. */
  plural?: string;
  list: (core: V, c: Ctx) => M[];
  get: (core: V, id: string, c: Ctx) => M;
  delete?: (core: V, id: string) => void;
  docs?: Partial<Record<Op, Docs>>;
  views: ReadonlyArray<ResourceView<M, V>>;
}

/** What a resource's model offers every view: its list, one by id (404 when unknown), and deletion. */
export interface Collection<M> {
  list(): M[];
  get(id: string): M;
  delete(id: string): void;
}

/**
 * A resource under `tag`, named `noun` in summaries and messages, whose shared reads and deletion
 * are its model's own: `model` picks the model from the registry; `list`, `get` or `delete` given
 * in `r` replace the model's.
 */
export function resource<M, V>(
  tag: string,
  noun: string,
  model: (core: V) => Collection<M>,
  r: Omit<ResourceRoutes<M, V>, "tag" | "noun" | "list" | "get" | "delete"> & Partial<Pick<ResourceRoutes<M, V>, "list" | "get" | "delete">>,
): ResourceRoutes<M, V> {
  return { tag, noun, list: (core) => model(core).list(), get: (core, id) => model(core).get(id), delete: (core, id) => model(core).delete(id), ...r };
}

/** A management route's JSON body: the size limit and the schema, beside the rest of its request. */
export const bodyRequest = <T extends z.ZodType, R extends Omit<NonNullable<RouteConfig["request"]>, "body">>(schema: T, request: R = {} as R) => ({
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)],
  request: { ...request, body: jsonRequest(schema) },
});

type Handler = (c: Ctx) => Response | Promise<Response>;
interface Registrar {
  openapi(route: RouteConfig, handler: Handler, hook?: CheckHook): unknown;
}

/**
 * The head of a route beyond a resource's five (actions, logs, sub-collections), under the
 * resource's tag: `createRoute({ ...route("get", path, operationId, summary), request, responses })`.
 */
export const routeHead =
  (tag: string) =>
  <const M extends "get" | "post" | "put" | "patch" | "delete", const P extends string>(method: M, path: P, operationId: string, summary: string) => ({
    method,
    path,
    operationId,
    tags: [tag],
    summary,
  });

/** The path parameter `{name}` of an item route. */
export const idParams = <N extends string>(name: N, example?: string) =>
  z.object({ [name]: z.string().min(1).openapi({ param: { name, in: "path" }, ...(example ? { example } : {}) }) } as Record<N, z.ZodString>);

/** A JSON request body of `schema`. */
export const jsonRequest = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });

/** The validated value of a route's `target` (Hono types it per route; here routes are built generically). */
const valid = (c: Ctx, target: "param" | "query" | "json"): Record<string, unknown> => (c.req.valid as (t: string) => Record<string, unknown>)(target);

/** The validated query of a view's list or get (`{}` when the route declares none). */
export const queryOf = <T>(c: Ctx): T => (valid(c, "query") ?? {}) as T;

/** Registers the list, create, get, update and delete routes of every view of `r`. */
export function serveResource<M, V>(core: V, router: OpenAPIHono<AppEnv>, r: ResourceRoutes<M, V>): void {
  for (const view of r.views) serveView(core, router as unknown as Registrar, r, view);
}

function serveView<M, V>(core: V, router: Registrar, r: ResourceRoutes<M, V>, v: ResourceView<M, V>): void {
  const { version } = v;
  const base = `${version.prefix}/${v.path}`;
  const idName = v.idParam ?? "id";
  const item = `${base}/{${idName}}`;
  const params = idParams(idName);
  const errors = { ...ERROR_RESPONSES, 404: problem(`No ${r.noun} with this id`) };
  const plural = r.plural ?? `${r.noun}s`;
  const has = (op: Op) => !v.omit?.includes(op);
  const docs = (op: Op, summary: string): Docs => ({ summary, ...r.docs?.[op], ...v.docs?.[op] });
  const route = (op: Op, verb: string, noun: string, config: Omit<RouteConfig, "operationId" | "tags">, summary: string): RouteConfig =>
    createRoute({ ...config, operationId: version.operationId(verb, noun), tags: [r.tag], ...docs(op, summary) });
  const show = (c: Ctx, m: M) => v.show(core, m, c);
  const id = (c: Ctx) => valid(c, "param")[idName] as string;
  const listOf = v.list ?? r.list;
  const getOf = v.get ?? r.get;

  const listSchema = version.wrapsLists ? z.object({ [v.listKey!]: z.array(v.schema) }) : z.array(v.schema);
  router.openapi(
    route(
      "list",
      "list",
      v.names.many,
      { method: "get", path: base, request: v.query?.list ? { query: v.query.list as never } : {}, responses: { 200: json(listSchema, `Every ${r.noun}`), ...errors } },
      `List ${plural}`,
    ),
    (c) => {
      const items = listOf(core, c).map((m) => show(c, m));
      return c.json(version.wrapsLists ? { [v.listKey!]: items } : items, 200);
    },
  );

  if (v.create && has("create")) {
    const create = v.create;
    const status = v.createStatus ?? version.createStatus;
    router.openapi(
      route(
        "create",
        "create",
        v.names.one,
        { method: "post", path: base, ...bodyRequest(create.schema), responses: { [status]: json(v.schema, "Created"), ...errors } },
        `Create a ${r.noun}`,
      ),
      async (c) => c.json(show(c, await create.run(core, valid(c, "json") as never, c, "")), status),
      create.hook,
    );
  }

  router.openapi(
    route(
      "get",
      "get",
      v.names.one,
      { method: "get", path: item, request: { params, ...(v.query?.get ? { query: v.query.get as never } : {}) }, responses: { 200: json(v.schema, `The ${r.noun}`), ...errors } },
      `Get a ${r.noun}`,
    ),
    (c) => c.json(show(c, getOf(core, id(c), c)), 200),
  );

  if (v.update && has("update")) {
    const update = v.update;
    const handler: Handler = async (c) => c.json(show(c, await update.run(core, valid(c, "json") as never, c, id(c))), 200);
    const config = (method: "patch" | "post", path: string) => ({
      method,
      path,
      ...bodyRequest(update.schema, { params }),
      responses: { 200: json(v.schema, `The updated ${r.noun}`), ...errors },
    });
    router.openapi(route("update", "update", v.names.one, config("patch", item), `Update a ${r.noun}`), handler, update.hook);
    if (version.updateByPost) {
      const post = route("update", "update", `${v.names.one}ByPost`, config("post", `${item}/update`), `Update a ${r.noun} (POST synonym of PATCH)`);
      router.openapi(post, handler, update.hook);
    }
  }

  const remove = r.delete;
  if (remove && has("delete")) {
    router.openapi(
      route("delete", "delete", v.names.one, { method: "delete", path: item, request: { params }, responses: { 204: { description: "Deleted; no body" }, ...errors } }, `Delete a ${r.noun}`),
      (c) => {
        remove(core, id(c));
        return c.body(null, 204);
      },
    );
  }
}

/**
 * A read-only report of one model (billing history): one GET per version, the same domain call
 * behind each, shown in the version's shape.
 */
export interface ReportView<V> {
  version: RestVersion;
  /** Path after the version: `billing/pods`. */
  path: string;
  operationId: string;
  query: z.ZodType;
  schema: z.ZodType;
  run: (core: V, query: never, c: Ctx) => unknown;
  docs: Docs;
}

/** `ReportView`, with the query's parsed type checked against `run`. */
export function report<Q extends z.ZodType, V>(view: Omit<ReportView<V>, "query" | "run"> & { query: Q; run: (core: V, query: z.output<Q>, c: Ctx) => unknown }): ReportView<V> {
  return view as ReportView<V>;
}

/** Registers a GET route per report view. */
export function serveReports<V>(core: V, router: OpenAPIHono<AppEnv>, tag: string, views: readonly ReportView<V>[]): void {
  const { 404: _notFound, ...errors } = ERROR_RESPONSES;
  for (const v of views) {
    const config = createRoute({
      method: "get",
      path: `${v.version.prefix}/${v.path}`,
      operationId: v.operationId,
      tags: [tag],
      ...v.docs,
      request: { query: v.query as never },
      responses: { 200: json(v.schema, "Billing records"), ...errors },
    });
    (router as unknown as Registrar).openapi(config, (c) => c.json(v.run(core, valid(c, "query") as never, c) as object, 200));
  }
}
