import type { RouteConfig } from "@hono/zod-openapi";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ZodObject, type z } from "zod";
import { bodyHint } from "./body-hint.js";
import { BodyHold, bodyLimitOf, bodyTextFieldsOf, jsonText, readIncoming } from "./body.js";
import { parseJsonBody } from "./checked-routes.js";
import type { Core } from "./core.js";
import type { Gate } from "./gate.js";
import type { Body } from "./large-body.js";
import { parseOffLoop, parsesOffLoop, withTexts, type OffLoopBody } from "./json-offload.js";
import { validationError } from "./problem.js";
import { RecentMap } from "../domain/recent-map.js";
import { RawExchange } from "./raw-exchange.js";
import { routeInfo, type RouteInfo } from "./route-info.js";
import type { ServiceRoute } from "./surfaces.js";
import type { FastEntry } from "./route-table.js";
import type { Leaving } from "../domain/leaving.js";

/** What a fast route's answer may read of its request beside its params and body, and add to its answer. */
export interface FastRequest {
  /** The checked query (what the route's query schema makes of none when there is none). */
  readonly query: Record<string, unknown>;
  /** Told when the client leaves before its answer is written (as Hono's `c.req.raw.signal` aborts); made when first asked for. */
  signal(): Leaving;
  /** A header of the answer. */
  header(name: string, value: string): void;
  /**
   * Its answer is written after those the current microtasks write: a worker's job-done waits
   * for the answer of the `/runsync` its result completes, which a caller waits on.
   */
  answerLast(): void;
}

/**
 * A route of the table also answered from node's request (a fast entry): its declaration, whose
 * params, query and body are checked as the app checks them, and its answer, the same function
 * the app's route calls.
 */
export interface FastRouteDecl {
  config: RouteConfig;
  /** The JSON text of its 200 answer (null: 204, no body), from the checked params and body; throws what to answer instead. */
  answer(params: Record<string, string>, body: unknown, request: FastRequest): Body | null | Promise<Body | null>;
  /**
   * A request sent behind another on its connection (HTTP/1.1 pipelining), whose answer node
   * writes after that one's, is handled only then: a worker's job-take sent in one write with its
   * job-done waits for the result to be handled and answered (the `/runsync` it completes first).
   * One whose connection closes before its turn is not handled at all (no answer could be read).
   */
  inTurn?: boolean;
  /** Its paths are each used about once (a job's own): see `FastEntry.oneOff`. */
  oneOff?: boolean;
}

/**
 * A path the app's URL handling takes as it is: no query, no percent-encoding, nothing but
 * unreserved characters; dot segments are refused apart (the app normalises them).
 */
const PLAIN_PATH = /^\/[A-Za-z0-9._~/-]*$/;
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;
/**
 * A query Hono reads as it is (nothing to decode): `name=value` pairs of unreserved characters
 * (and commas, which lists use), joined by `&`; a name without `=` has the value "".
 */
const PLAIN_QUERY = /^[A-Za-z0-9._~,=&-]*$/;
/** How many query strings a route keeps checked (a worker sends the same few again and again). */
const QUERIES_KEPT = 200;
/**
 * A Host header whose URL @hono/node-server makes as it is: those of its own test, which takes
 * ports 1000–59999 as they are, and ports 60000–65535, which it parses with `new URL` into the
 * same text (only a scheme's default port, under 1000, would be dropped). A port of 0 gives
 * minipod one of the kernel's, up to 60999 on Linux.
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5]))?$/;

/** A route's checks as the app runs them (see `CheckedOpenAPIHono`). */
interface Checks {
  route: FastRouteDecl;
  params: z.ZodType | undefined;
  /** The params' schema's fields, when it is a plain object (no check of its own): each param checked alone. */
  paramFields: Readonly<Record<string, z.ZodType>> | undefined;
  query: z.ZodType | undefined;
  body: { schema: z.ZodType; limit: number; hint: string; textFields: readonly string[] } | undefined;
}

/**
 * The busiest queue routes (`POST /run`, `GET /status`, `POST /runsync`) and the worker routes
 * on a warm call's path (job-take, job-done) as fast entries of the route table: answered from
 * node's request and response, behind the same gate as every route.
 *
 * Through Hono most of their cost is the framework's rather than the job's: @hono/node-server's
 * Request, Hono's Context and Response, the route's chain. Here the gate (`Gate.pass`) runs as
 * for any request, then the route's own steps, from the same declarations and functions: the body
 * read under the route's limit, its JSON parsed and checked against the route's own schemas, the
 * route's own answer; errors are answered with the same problem+json.
 * `test/e2e/direct-routes.test.ts` sends the same requests both ways and compares status,
 * headers, body and journal.
 *
 * Only what Hono would read so, untouched, is taken: a path with no percent-encoding or dot
 * segment, of the queue's or the worker's surface, whose params pass the route's schema; no query,
 * or one with nothing to decode that passes the route's query schema (a route that declares none
 * takes none); a Host node-server takes as it is; no declared body over the limit. Anything else
 * is left to Hono before a byte is read or anything counted.
 */
/** A path a fast route takes: its checked params, and what the gate makes of it. */
interface KnownPath {
  params: Record<string, string>;
  service: { route: ServiceRoute; info: RouteInfo };
}

export class FastRoute implements FastEntry<KnownPath> {
  private readonly checks: Checks;
  readonly method: string;
  readonly oneOff: boolean;
  /** Checked queries by their text ("" for none); null for one left to Hono. */
  private readonly queries = new RecentMap<string, Record<string, unknown> | null>(QUERIES_KEPT);

  constructor(
    private readonly core: Pick<Core, "failures" | "paths" | "bodies">,
    private readonly gate: Gate,
    route: FastRouteDecl,
  ) {
    this.method = route.config.method.toUpperCase();
    if (this.method !== "GET" && this.method !== "POST") throw new Error(`${this.method} ${route.config.path}: only GET and POST routes have a fast entry`);
    this.checks = checksOf(route);
    this.oneOff = route.oneOff === true;
  }

  accepts(method: string, path: string, params: Record<string, string>): KnownPath | null {
    // HEAD is Hono's (it answers it from the GET route, without the body).
    if (method !== this.method || !PLAIN_PATH.test(path) || DOT_SEGMENT.test(path)) return null;
    const route = this.core.paths.classify(method, path);
    if (route.surface === "rest") return null;
    const service = { route, info: routeInfo(path, route) };
    if (!this.checks.params) return { params, service };
    const result = this.checks.params.safeParse(params);
    return result.success ? { params: Object.freeze(result.data as Record<string, string>), service } : null;
  }

  sibling(known: KnownPath, name: string, value: string): KnownPath | null {
    // What `accepts` asks of a path, asked of the one segment that differs: the service route and
    // what the journal names come from the path's first two segments, the same.
    if (!PLAIN_PATH.test(`/${value}`) || DOT_SEGMENT.test(`/${value}`)) return null;
    if (!this.checks.params) return { params: { ...known.params, [name]: value }, service: known.service };
    // A plain object schema checks each param on its own: the others passed it already.
    const field = this.checks.paramFields?.[name];
    if (field === undefined) {
      const result = this.checks.params.safeParse({ ...known.params, [name]: value });
      return result.success ? { params: Object.freeze(result.data as Record<string, string>), service: known.service } : null;
    }
    const result = field.safeParse(value);
    return result.success ? { params: Object.freeze({ ...known.params, [name]: result.data as string }), service: known.service } : null;
  }

  take(req: IncomingMessage, res: ServerResponse, { params, service }: KnownPath, path: string, query: string | undefined): boolean {
    const checkedQuery = this.query(query);
    if (checkedQuery === null) return false;
    const host = req.headers.host;
    if (host === undefined || !PLAIN_HOST.test(host)) return false;
    const body = this.checks.body;
    if (body !== undefined) {
      const declared = Number(req.headers["content-length"]);
      if (Number.isFinite(declared) && declared > body.limit) return false;
    }
    // Pipelined behind an answer not yet written: node gives this answer the socket in its turn.
    if (this.checks.route.inTurn === true && res.socket === null) {
      res.once("socket", () => this.handle(req, res, params, service, path, query, checkedQuery));
      return true;
    }
    this.handle(req, res, params, service, path, query, checkedQuery);
    return true;
  }

  private handle(
    req: IncomingMessage,
    res: ServerResponse,
    params: Record<string, string>,
    service: KnownPath["service"],
    path: string,
    query: string | undefined,
    checkedQuery: Record<string, unknown>,
  ): void {
    const body = this.checks.body;
    const x = new RawExchange(req, res, this.method, path, query, this.core.failures, service);
    const request = new ExchangeRequest(x, checkedQuery);
    if (body === undefined) {
      // A GET: nothing to read; an answer holding a large stored payload is read first, a part a
      // turn (a promise then).
      x.next = () => this.fill(x, () => this.checks.route.answer(params, undefined, request));
      x.answerThrough(this.gate);
      return;
    }
    // The body's bytes count against memory.requestBodyBytes until the answer is sent.
    const hold = new BodyHold(this.core.bodies);
    const fail = (err: unknown) => x.fail(err);
    x.next = () =>
      readIncoming(req, body.limit, hold).then((read) => {
        const text = (x.text = jsonText(read));
        // A large body is parsed off the event loop, as the app's routes do (see parseOffLoop);
        // a small one here, in this step (no promise more on every /run).
        if (parsesOffLoop(text)) return parseOffLoop(text, body.textFields, body.hint).then((offLoop) => this.check(x, params, offLoop.value, offLoop, request), fail);
        let value: unknown;
        try {
          value = parseJsonBody(text, body.hint);
        } catch (err) {
          return fail(err);
        }
        return this.check(x, params, value, undefined, request);
      }, fail);
    x.answerThrough(this.gate, () => hold.release());
  }

  /**
   * The query checked as the app checks it: the route's schema's value for it (kept by its text),
   * or null when Hono is to read it (it has something to decode, or fails the schema: Hono then
   * answers the problem, after the body as it does).
   */
  private query(text: string | undefined): Record<string, unknown> | null {
    const schema = this.checks.query;
    // `?` alone is Hono's (the journal keeps the query as Hono reads it).
    if (schema === undefined || text === "") return text === undefined ? EMPTY_QUERY : null;
    const key = text ?? "";
    let checked = this.queries.get(key);
    if (checked === undefined) {
      checked = null;
      if (PLAIN_QUERY.test(key)) {
        const result = schema.safeParse(plainQuery(key));
        if (result.success) checked = Object.freeze(result.data as Record<string, unknown>);
      }
      this.queries.set(key, checked);
    }
    return checked;
  }

  /** Checks a parsed body against the route's schema and answers it (or the problem): a promise while a large input is staged. */
  private check(x: RawExchange, params: Record<string, string>, value: unknown, offLoop: OffLoopBody | undefined, request: FastRequest): Promise<void> | undefined {
    return this.fill(x, () => {
      const checked = this.checks.body!.schema.safeParse(value);
      if (!checked.success) throw validationError(checked.error, "body");
      return this.checks.route.answer(params, offLoop ? withTexts(checked.data, offLoop) : checked.data, request);
    });
  }

  /** `x` answers what `make` gives, or the problem it throws or rejects with: at once for a text, once settled for a promise. */
  private fill(x: RawExchange, make: () => Body | null | Promise<Body | null>): Promise<void> | undefined {
    let text: Body | null | Promise<Body | null>;
    try {
      text = make();
    } catch (err) {
      x.fail(err);
      return undefined;
    }
    if (!(text instanceof Promise)) {
      answerWith(x, text);
      return undefined;
    }
    return text.then(
      (t) => answerWith(x, t),
      (err: unknown) => x.fail(err),
    );
  }
}

const EMPTY_QUERY: Record<string, unknown> = Object.freeze({});

const answerWith = (x: RawExchange, text: Body | null): void => (text === null ? x.noContent() : x.json(text));

/** A plain query (see PLAIN_QUERY) as Hono's `queries()` reads it: each name's values, one value alone (see `queryOf`). */
function plainQuery(text: string): Record<string, string | string[]> {
  const values = new Map<string, string[]>();
  for (const pair of text.split("&")) {
    const eq = pair.indexOf("=");
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (name === "") continue;
    const value = eq === -1 ? "" : pair.slice(eq + 1);
    const got = values.get(name);
    if (got) got.push(value);
    else values.set(name, [value]);
  }
  return Object.fromEntries([...values].map(([k, v]) => [k, v.length === 1 ? v[0]! : v]));
}

/** What an answer reads of `x` beyond its params and body. */
class ExchangeRequest implements FastRequest {
  private leaving: Leaving | undefined;

  constructor(
    private readonly x: RawExchange,
    readonly query: Record<string, unknown>,
  ) {}

  signal(): Leaving {
    return (this.leaving ??= this.x.leaving());
  }

  header(name: string, value: string): void {
    this.x.header(name, value);
  }

  answerLast(): void {
    this.x.answerLast();
  }
}

/** The checks a route declares, as `CheckedOpenAPIHono` runs them on a request without a query. */
function checksOf(route: FastRouteDecl): Checks {
  const { config } = route;
  const where = `${config.method.toUpperCase()} ${config.path}`;
  const request = config.request;
  if (request?.headers || request?.cookies) throw new Error(`${where}: header and cookie parameters are not checked directly`);
  let body: Checks["body"];
  const content = request?.body?.content;
  if (content) {
    const media = content["application/json"];
    const declared = config.middleware === undefined ? [] : Array.isArray(config.middleware) ? config.middleware : [config.middleware];
    const limit = declared.map(bodyLimitOf).find((l) => l !== undefined);
    if (Object.keys(content).length !== 1 || !media || !("schema" in media) || !media.schema || limit === undefined)
      throw new Error(`${where}: only a JSON body under jsonBody(limit) is read directly`);
    if (declared.length !== 1) throw new Error(`${where}: middleware other than jsonBody would be skipped`);
    body = { schema: media.schema as z.ZodType, limit, hint: bodyHint(media.schema as z.ZodType), textFields: declared.flatMap(bodyTextFieldsOf) };
  } else if (config.middleware !== undefined && (!Array.isArray(config.middleware) || config.middleware.length > 0)) {
    throw new Error(`${where}: middleware would be skipped`);
  }
  const params = request?.params as z.ZodType | undefined;
  const paramFields = params instanceof ZodObject && !(params._zod.def.checks?.length ?? 0) ? (params.shape as Record<string, z.ZodType>) : undefined;
  return { route, params, paramFields, query: request?.query as z.ZodType | undefined, body };
}
