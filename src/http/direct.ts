import type { RouteConfig } from "@hono/zod-openapi";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { REQUEST_FAULTS } from "../domain/faults.js";
import type { Logger } from "../domain/logger.js";
import { RecentMap } from "../domain/recent-map.js";
import type { ServiceRoute } from "./surfaces.js";
import type { HeaderSink } from "./auth.js";
import { bodyHint } from "./body-hint.js";
import { BodyHold, bodyLimitOf, bodyTextFieldsOf, jsonText, readIncoming } from "./body.js";
import { honoPath, parseJsonBody } from "./checked-routes.js";
import type { Core } from "./core.js";
import { requestLogLine, type Admission } from "./gate.js";
import type { RequestJournal } from "./journal.js";
import { endWith, joined, type Body } from "./large-body.js";
import { OFF_LOOP_BYTES, parseOffLoop, withTexts, type OffLoopBody } from "./json-offload.js";
import { problemAnswer, validationError } from "./problem.js";
import { routeInfo, type RouteInfo } from "./route-info.js";

/**
 * A route also answered before the app: its declaration, whose params and body are checked as the
 * app checks them, and its answer, the same function the app's route calls.
 */
export interface DirectRoute {
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
/** How many paths of a method keep whether they are answered here (clients poll /status of many jobs). */
const PATHS_KEPT = 2_000;

/** A route's checks as the app runs them (see `CheckedOpenAPIHono`). */
interface Checks {
  route: DirectRoute;
  params: z.ZodType | undefined;
  body: { schema: z.ZodType; limit: number; hint: string; textFields: readonly string[] } | undefined;
}

/** A path answered here: its route and checked params, and what the gate and the journal make of it. */
interface KnownPath {
  checks: Checks;
  params: Record<string, string>;
  route: ServiceRoute;
  info: RouteInfo;
}

/** An answer being made: status, headers (the gate's first, as Hono's Context keeps them) and body. */
class Answer implements HeaderSink {
  status = 200;
  headers: Record<string, string | number> = {};
  body: Body = "";

  header(name: string, value: string): void {
    this.headers[name] = value;
  }

  json(text: Body): void {
    this.headers["Content-Type"] = "application/json";
    this.body = text;
  }

  problem(err: unknown): void {
    const { status, headers, body } = problemAnswer(err);
    this.status = status;
    Object.assign(this.headers, headers);
    this.body = body;
  }
}

/**
 * The busiest queue routes (`POST /run`, `GET /status`) answered straight from node's request and
 * response, before Hono.
 *
 * Through the app most of their cost is the framework's rather than the job's: @hono/node-server's
 * Request, Hono's Context and Response, the route's chain. Here the same steps run in the same
 * order, from the same functions and declarations: the gate's admission (authentication, quotas,
 * scope, queue limits), the body read under the route's limit, its JSON parsed and checked
 * against the route's own schemas, the route's own answer, for writes the wait for the commit,
 * then the journal entry and the log line; errors are answered with the same problem+json.
 * `test/e2e/direct-routes.test.ts` sends the same requests both ways and compares status,
 * headers, body and journal.
 *
 * Only what the app would answer so, untouched, is taken: a path the app's router sends to one
 * of these routes behind the gate alone, with no query, no percent-encoding or dot segment, a
 * Host node-server takes as it is, no declared body over the limit, and no request fault rule
 * armed. Anything else is left to the app before a byte is read or anything counted.
 */
export class DirectRoutes {
  /** By method, then the route's path as Hono routes it. */
  private readonly routes = new Map<string, Map<string, Checks>>();
  /** By method, then path: what is known of a path answered here, null for one left to the app. */
  private readonly paths = new Map<string, RecentMap<string, KnownPath | null>>();
  private readonly log: Logger;

  constructor(
    private readonly core: Pick<Core, "jobStore" | "faults" | "log" | "failures" | "paths" | "bodies">,
    private readonly journal: RequestJournal,
    private readonly admit: Admission,
    /** The app's routes a request matches, in order (Hono's `RouterRoute` path of each), with the params of the last. */
    private readonly matched: (method: string, path: string) => { paths: string[]; params: Record<string, string> },
    routes: readonly DirectRoute[],
  ) {
    this.log = core.log;
    for (const route of routes) {
      const method = route.config.method.toUpperCase();
      if (method !== "GET" && method !== "POST") throw new Error(`${method} ${route.config.path}: only GET and POST routes are answered directly`);
      let byPath = this.routes.get(method);
      if (!byPath) {
        this.routes.set(method, (byPath = new Map()));
        this.paths.set(method, new RecentMap(PATHS_KEPT));
      }
      byPath.set(honoPath(route.config.path), checksOf(route));
    }
  }

  /** Answers the request and returns true, or returns false having touched nothing. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const paths = this.paths.get(req.method ?? "");
    if (paths === undefined) return false;
    const path = req.url ?? "";
    const host = req.headers.host;
    if (host === undefined || !PLAIN_HOST.test(host)) return false;
    if (this.core.faults.armed(REQUEST_FAULTS)) return false;
    let known = paths.get(path);
    if (known === undefined) paths.set(path, (known = this.known(req.method!, path)));
    if (known === null) return false;
    const body = known.checks.body;
    if (body !== undefined) {
      const declared = Number(req.headers["content-length"]);
      if (Number.isFinite(declared) && declared > body.limit) return false;
    }
    this.answer(req, res, path, known);
    return true;
  }

  /** What is known of a path answered here, or null. */
  private known(method: string, path: string): KnownPath | null {
    if (!PLAIN_PATH.test(path) || DOT_SEGMENT.test(path)) return null;
    const route = this.core.paths.classify(method, path);
    if (route.surface !== "queue") return null;
    const { paths, params } = this.matched(method, path);
    const checks = paths.length === 2 ? this.routes.get(method)?.get(paths[1]!) : undefined;
    if (checks === undefined) return null;
    let checked = params;
    if (checks.params) {
      const result = checks.params.safeParse(params);
      if (!result.success) return null;
      checked = Object.freeze(result.data as Record<string, string>);
    }
    return { checks, params: checked, route, info: routeInfo(path, route) };
  }

  private answer(req: IncomingMessage, res: ServerResponse, path: string, known: KnownPath): void {
    const startedMs = performance.now();
    const at = this.journal.enabled ? this.journal.now() : 0;
    const method = req.method!;
    const answer = new Answer();
    let release: (() => void) | undefined;
    try {
      release = this.admit(method, path, req.headers.authorization, known.route, answer);
    } catch (err) {
      this.fail(answer, err, method, path);
      this.send(res, answer, method, path, known.info, at, startedMs, undefined);
      return;
    }
    const body = known.checks.body;
    if (body === undefined) {
      // A GET: nothing to read, nothing written to wait for (as the gate); an answer holding a
      // large stored payload is read first, a part a turn (a promise then).
      const sent = () => {
        release?.();
        this.send(res, answer, method, path, known.info, at, startedMs, undefined);
      };
      return this.fill(answer, () => known.checks.route.answer(known.params, undefined), method, path, sent);
    }
    let bodyText: string | undefined;
    // The body's bytes count against memory.requestBodyBytes until the answer is sent.
    const hold = new BodyHold(this.core.bodies);
    const settled = () => {
      const finish = () => {
        release?.();
        this.send(res, answer, method, path, known.info, at, startedMs, bodyText);
        hold.release();
      };
      const durable = this.core.jobStore.whenDurable();
      if (durable === undefined) return finish();
      durable.then(finish, (err: unknown) => {
        this.fail(answer, err, method, path);
        finish();
      });
    };
    readIncoming(req, body.limit, hold).then(
      (read) => {
        const text = (bodyText = jsonText(read));
        if (text.length >= OFF_LOOP_BYTES) {
          // A large body is parsed off the event loop, as the app's routes do (see parseOffLoop).
          parseOffLoop(text, body.textFields, body.hint).then(
            (offLoop) => this.check(answer, known, offLoop.value, offLoop, method, path, settled),
            (err: unknown) => {
              this.fail(answer, err, method, path);
              settled();
            },
          );
          return;
        }
        // A small one here, in this step: no async function and its promise on every /run.
        let value: unknown;
        try {
          value = parseJsonBody(text, body.hint);
        } catch (err) {
          this.fail(answer, err, method, path);
          return settled();
        }
        this.check(answer, known, value, undefined, method, path, settled);
      },
      (err: unknown) => {
        this.fail(answer, err, method, path);
        settled();
      },
    );
  }

  /**
   * Checks a parsed body against the route's schema and answers it (or the problem), then calls
   * `settled`: at once, or once a large input is staged (the route's answer is a promise then).
   */
  private check(answer: Answer, known: KnownPath, value: unknown, offLoop: OffLoopBody | undefined, method: string, path: string, settled: () => void): void {
    this.fill(
      answer,
      () => {
        const checked = known.checks.body!.schema.safeParse(value);
        if (!checked.success) throw validationError(checked.error, "body");
        return known.checks.route.answer(known.params, offLoop ? withTexts(checked.data, offLoop) : checked.data);
      },
      method,
      path,
      settled,
    );
  }

  /**
   * `answer` filled with what `make` gives (or the problem it throws or rejects with), then
   * `done()`: in this step for a text, once settled for a promise (a large payload staged or read).
   */
  private fill(answer: Answer, make: () => Body | Promise<Body>, method: string, path: string, done: () => void): void {
    let text: Body | Promise<Body>;
    try {
      text = make();
    } catch (err) {
      this.fail(answer, err, method, path);
      return done();
    }
    if (!(text instanceof Promise)) {
      answer.json(text);
      return done();
    }
    text.then(
      (t) => answer.json(t),
      (err: unknown) => this.fail(answer, err, method, path),
    ).finally(done);
  }

  private fail(answer: Answer, err: unknown, method: string, path: string): void {
    this.core.failures.failed(method, path, err);
    answer.problem(err);
  }

  private send(res: ServerResponse, answer: Answer, method: string, path: string, info: RouteInfo, at: number, startedMs: number, bodyText: string | undefined): void {
    if (this.journal.enabled) {
      // Only requests without a query are answered here (see `known`).
      const status = answer.status;
      const { endpoint, operation } = info;
      this.journal.write({
        method,
        path,
        query: undefined,
        endpoint,
        operation,
        status,
        at,
        durationMs: this.journal.since(startedMs),
        bodyText,
        responseText: status >= 400 ? joined(answer.body) : undefined,
      });
    }
    if (this.log.enabled("info")) this.log.info(requestLogLine(method, path, answer.status, startedMs));
    endWith(res, answer.status, answer.headers, answer.body);
  }
}

/** The checks a route declares, as `CheckedOpenAPIHono` runs them on a request without a query. */
function checksOf(route: DirectRoute): Checks {
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
