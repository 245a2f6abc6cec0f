import type { RouteConfig } from "@hono/zod-openapi";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { bodyHint } from "./body-hint.js";
import { BodyHold, bodyLimitOf, bodyTextFieldsOf, jsonText, readIncoming } from "./body.js";
import { parseJsonBody } from "./checked-routes.js";
import type { Core } from "./core.js";
import type { Gate } from "./gate.js";
import type { Body } from "./large-body.js";
import { parseOffLoop, parsesOffLoop, withTexts, type OffLoopBody } from "./json-offload.js";
import { validationError } from "./problem.js";
import { RawExchange } from "./raw-exchange.js";
import { routeInfo, type RouteInfo } from "./route-info.js";
import type { ServiceRoute } from "./surfaces.js";
import type { FastEntry } from "./route-table.js";

/**
 * A route of the table also answered from node's request (a fast entry): its declaration, whose
 * params and body are checked as the app checks them, and its answer, the same function the
 * app's route calls.
 */
export interface FastRouteDecl {
  config: RouteConfig;
  /** The JSON text of its 200 answer, from the checked params and body; throws what to answer instead. */
  answer(params: Record<string, string>, body: unknown): Body | Promise<Body>;
}

/**
 * A path the app's URL handling takes as it is: no query, no percent-encoding, nothing but
 * unreserved characters; dot segments are refused apart (the app normalises them).
 */
const PLAIN_PATH = /^\/[A-Za-z0-9._~/-]*$/;
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;
/** A Host header @hono/node-server takes as it is, without parsing a URL (its own test). */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

/** A route's checks as the app runs them (see `CheckedOpenAPIHono`). */
interface Checks {
  route: FastRouteDecl;
  params: z.ZodType | undefined;
  body: { schema: z.ZodType; limit: number; hint: string; textFields: readonly string[] } | undefined;
}

/**
 * The busiest queue routes (`POST /run`, `GET /status`) as fast entries of the route table:
 * answered from node's request and response, behind the same gate as every route.
 *
 * Through Hono most of their cost is the framework's rather than the job's: @hono/node-server's
 * Request, Hono's Context and Response, the route's chain. Here the gate (`Gate.pass`) runs as
 * for any request, then the route's own steps, from the same declarations and functions: the body
 * read under the route's limit, its JSON parsed and checked against the route's own schemas, the
 * route's own answer; errors are answered with the same problem+json.
 * `test/e2e/direct-routes.test.ts` sends the same requests both ways and compares status,
 * headers, body and journal.
 *
 * Only what Hono would read so, untouched, is taken: a path with no query, no percent-encoding or
 * dot segment, of the queue's surface, whose params pass the route's schema; a Host node-server
 * takes as it is; no declared body over the limit. Anything else is left to Hono before a byte
 * is read or anything counted.
 */
/** A path a fast route takes: its checked params, and what the gate makes of it. */
interface KnownPath {
  params: Record<string, string>;
  service: { route: ServiceRoute; info: RouteInfo };
}

export class FastRoute implements FastEntry<KnownPath> {
  private readonly checks: Checks;
  readonly method: string;

  constructor(
    private readonly core: Pick<Core, "failures" | "paths" | "bodies">,
    private readonly gate: Gate,
    route: FastRouteDecl,
  ) {
    this.method = route.config.method.toUpperCase();
    if (this.method !== "GET" && this.method !== "POST") throw new Error(`${this.method} ${route.config.path}: only GET and POST routes have a fast entry`);
    this.checks = checksOf(route);
  }

  accepts(method: string, path: string, params: Record<string, string>): KnownPath | null {
    // HEAD is Hono's (it answers it from the GET route, without the body).
    if (method !== this.method || !PLAIN_PATH.test(path) || DOT_SEGMENT.test(path)) return null;
    const route = this.core.paths.classify(method, path);
    if (route.surface !== "queue") return null;
    const service = { route, info: routeInfo(path, route) };
    if (!this.checks.params) return { params, service };
    const result = this.checks.params.safeParse(params);
    return result.success ? { params: Object.freeze(result.data as Record<string, string>), service } : null;
  }

  take(req: IncomingMessage, res: ServerResponse, { params, service }: KnownPath, path: string, query: string | undefined): boolean {
    if (query !== undefined) return false;
    const host = req.headers.host;
    if (host === undefined || !PLAIN_HOST.test(host)) return false;
    const body = this.checks.body;
    if (body !== undefined) {
      const declared = Number(req.headers["content-length"]);
      if (Number.isFinite(declared) && declared > body.limit) return false;
    }
    const x = new RawExchange(req, res, this.method, path, undefined, this.core.failures, service);
    if (body === undefined) {
      // A GET: nothing to read; an answer holding a large stored payload is read first, a part a
      // turn (a promise then).
      x.next = () => this.fill(x, () => this.checks.route.answer(params, undefined));
      x.answerThrough(this.gate);
      return true;
    }
    // The body's bytes count against memory.requestBodyBytes until the answer is sent.
    const hold = new BodyHold(this.core.bodies);
    const fail = (err: unknown) => x.fail(err);
    x.next = () =>
      readIncoming(req, body.limit, hold).then((read) => {
        const text = (x.text = jsonText(read));
        // A large body is parsed off the event loop, as the app's routes do (see parseOffLoop);
        // a small one here, in this step (no promise more on every /run).
        if (parsesOffLoop(text)) return parseOffLoop(text, body.textFields, body.hint).then((offLoop) => this.check(x, params, offLoop.value, offLoop), fail);
        let value: unknown;
        try {
          value = parseJsonBody(text, body.hint);
        } catch (err) {
          return fail(err);
        }
        return this.check(x, params, value, undefined);
      }, fail);
    x.answerThrough(this.gate, () => hold.release());
    return true;
  }

  /** Checks a parsed body against the route's schema and answers it (or the problem): a promise while a large input is staged. */
  private check(x: RawExchange, params: Record<string, string>, value: unknown, offLoop: OffLoopBody | undefined): Promise<void> | undefined {
    return this.fill(x, () => {
      const checked = this.checks.body!.schema.safeParse(value);
      if (!checked.success) throw validationError(checked.error, "body");
      return this.checks.route.answer(params, offLoop ? withTexts(checked.data, offLoop) : checked.data);
    });
  }

  /** `x` answers what `make` gives, or the problem it throws or rejects with: at once for a text, once settled for a promise. */
  private fill(x: RawExchange, make: () => Body | Promise<Body>): Promise<void> | undefined {
    let text: Body | Promise<Body>;
    try {
      text = make();
    } catch (err) {
      x.fail(err);
      return undefined;
    }
    if (!(text instanceof Promise)) {
      x.json(text);
      return undefined;
    }
    return text.then(
      (t) => x.json(t),
      (err: unknown) => x.fail(err),
    );
  }
}

/** The checks a route declares, as `CheckedOpenAPIHono` runs them on a request without a query. */
function checksOf(route: FastRouteDecl): Checks {
  const { config } = route;
  const where = `${config.method.toUpperCase()} ${config.path}`;
  const request = config.request;
  if (request?.headers || request?.cookies) throw new Error(`${where}: header and cookie parameters are not checked directly`);
  // Only requests without a query are taken: an absent query must pass as the app would pass it.
  if (request?.query && !(request.query as z.ZodType).safeParse({}).success) throw new Error(`${where}: an absent query fails its schema`);
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
  return { route, params: request?.params as z.ZodType | undefined, body };
}
