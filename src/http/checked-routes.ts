import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context, Env, MiddlewareHandler } from "hono";
import type { z } from "zod";
import { EmulatorError } from "../domain/errors.js";
import { JSON_DEPTH_MAX } from "../domain/limits.js";
import { nestsDeeperThan } from "../domain/redact.js";
import { RecentMap } from "../domain/recent-map.js";
import { bodyHint } from "./body-hint.js";
import { BodyHold, bodyLimitOf, bodyTextFieldsOf, readJsonBody, type BodyBudget } from "./body.js";
import { parseOffLoop, parsesOffLoop, withTexts, type OffLoopBody } from "./json-offload.js";

/** What a route's check hands its hook: the same shape @hono/zod-openapi's hooks receive. */
export type CheckResult = { target: CheckTarget; success: boolean; data: unknown; error?: z.ZodError };
/** Answers a failed check: throws (the app's problem+json), or returns a Response to send. */
export type CheckHook = (result: CheckResult, c: Context) => Response | undefined | void;
type RouteStep = (c: Context, next: () => Promise<void>) => Response | Promise<Response>;
type CheckTarget = "query" | "param" | "json";
type Check = {
  target: CheckTarget;
  schema: z.ZodType;
  read: (c: Context, body: string | undefined) => unknown;
  /** What the value read depends on alone, for checks whose results are kept (see `KeptResults`). */
  keyOf?: (c: Context) => string | undefined;
  /** A JSON body's: what the route takes, ending the message of a body that is not JSON. */
  hint?: string;
};

/** How many results a check keeps. */
const RESULTS_KEPT = 1_000;

/**
 * The parsed values of a check's recent inputs: a path's params depend on the path alone, an
 * absent query is always the same, and clients poll the same `/status/{id}` over and over. The
 * values are frozen, as they are handed to each request that asks. Bounded: the oldest leave first.
 */
class KeptResults {
  private readonly kept = new RecentMap<string, object>(RESULTS_KEPT);

  get(key: string): object | undefined {
    return this.kept.get(key);
  }

  set(key: string, value: object): object {
    const frozen = Object.freeze(value);
    this.kept.set(key, frozen);
    return frozen;
  }
}

/** An OpenAPI path as Hono routes it: `/v2/{endpoint_id}/run` is `/v2/:endpoint_id/run`. */
export const honoPath = (path: string): string => path.replaceAll(/\/{(.+?)}/g, "/:$1");

/**
 * A JSON body's value; 400 when it is not JSON (the message ends with `hint`, what the route takes:
 * see `bodyHint`), or nests deeper than `JSON_DEPTH_MAX` levels.
 */
export function parseJsonBody(text: string, hint = "send the body as JSON"): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new EmulatorError("BAD_REQUEST", `the request body is not valid JSON; ${hint}`);
  }
  // Each level takes two characters at least: a shorter text cannot nest too deep.
  if (text.length > 2 * JSON_DEPTH_MAX && nestsDeeperThan(value, JSON_DEPTH_MAX)) {
    throw new EmulatorError("BAD_REQUEST", `the request body nests arrays and objects more than ${JSON_DEPTH_MAX} levels deep; flatten it, or send the deep part as a string`);
  }
  return value;
}


/**
 * OpenAPIHono whose routes check their path, query and JSON body in the route's own step, with
 * zod's synchronous parser, from the same `createRoute` declarations (so `/openapi.json` is
 * unchanged).
 *
 * @hono/zod-openapi's `openapi()` puts an async middleware before the handler for each checked
 * part, plus a media-type gate for a body: on `POST /run` four links of Hono's chain, each a
 * promise or two and an async zod parse, and as much time as the route's own work. Here a route
 * is one link (its own middleware aside). A body declared with `jsonBody(limit)` is read in that
 * link too, under its limit, and parsed as JSON whatever its Content-Type (curl's default form
 * type included).
 *
 * Declarations this does not check (header or cookie parameters, non-JSON bodies, a JSON body
 * without `jsonBody`) are refused when the route is added, not ignored at request time.
 */
export class CheckedOpenAPIHono<E extends Env> extends OpenAPIHono<E> {
  constructor(init: ConstructorParameters<typeof OpenAPIHono<E>>[0] & { onInvalid: CheckHook; bodies?: BodyBudget }) {
    super(init);
    const { onInvalid, bodies } = init;
    const add = (config: RouteConfig & { hide?: boolean }, handler: (c: Context, next: () => Promise<void>) => unknown, hook?: CheckHook) => {
      const { middleware, hide, ...route } = config;
      if (!hide) this.openAPIRegistry.registerPath(route);
      const declared = middleware === undefined ? [] : Array.isArray(middleware) ? middleware : [middleware];
      const bodyLimit = declared.map(bodyLimitOf).find((limit) => limit !== undefined);
      const textFields = declared.flatMap(bodyTextFieldsOf);
      const chain = declared.filter((mw) => bodyLimitOf(mw) === undefined) as MiddlewareHandler[];
      const checks = routeChecks(route, bodyLimit);
      const jsonHint = checks.find((ch) => ch.target === "json")?.hint;
      const kept = checks.map((check) => (check.keyOf ? new KeptResults() : undefined));
      const check = (c: Context, body: string | undefined, offLoop?: OffLoopBody): Response | undefined => {
        for (let i = 0; i < checks.length; i++) {
          const { target, schema, read, keyOf } = checks[i]!;
          const key = keyOf?.(c);
          const known = key === undefined ? undefined : kept[i]!.get(key);
          if (known !== undefined) {
            c.req.addValidatedData(target, known);
            continue;
          }
          const value = target === "json" && offLoop ? offLoop.value : read(c, body);
          const result = schema.safeParse(value);
          if (!result.success) {
            const failed: CheckResult = { target, success: false, data: value, error: result.error };
            const out = hook?.(failed, c) ?? onInvalid(failed, c);
            if (out instanceof Response) return out;
            throw new EmulatorError("VALIDATION_FAILED", `the request ${target === "json" ? "body" : target} is invalid`);
          }
          const data = (target === "json" && offLoop ? withTexts(result.data, offLoop) : result.data) as object;
          c.req.addValidatedData(target, key === undefined || typeof data !== "object" || data === null ? data : kept[i]!.set(key, data));
        }
        return undefined;
      };
      // Hono's chain takes a handler's Response as it is, promise or not.
      const step: RouteStep =
        bodyLimit === undefined
          ? (c, next) => check(c, undefined) ?? (handler(c, next) as Promise<Response>)
          : async (c, next) => {
              // The body's bytes count against memory.requestBodyBytes until the route has answered.
              const hold = bodies && new BodyHold(bodies);
              try {
                const body = await readJsonBody(c, bodyLimit, hold);
                // A large body is parsed off the event loop (see parseOffLoop).
                const offLoop = jsonHint !== undefined && parsesOffLoop(body) ? await parseOffLoop(body, textFields, jsonHint) : undefined;
                return check(c, body, offLoop) ?? (await (handler(c, next) as Promise<Response>));
              } finally {
                hold?.release();
              }
            };
      this.on([route.method.toUpperCase()], [honoPath(route.path)], ...chain, step as MiddlewareHandler);
      return this;
    };
    // The declared type of `openapi` (its inference of each route's typed context) stays; only
    // what it does when called changes.
    this.openapi = add as unknown as OpenAPIHono<E>["openapi"];
  }
}

function routeChecks(route: RouteConfig, bodyLimit: number | undefined): Check[] {
  const where = `${route.method.toUpperCase()} ${route.path}`;
  const request = route.request;
  if (request?.headers || request?.cookies) throw new Error(`${where}: header and cookie parameters are not checked by CheckedOpenAPIHono`);
  const checks: Check[] = [];
  if (request?.query) checks.push({ target: "query", schema: request.query as z.ZodType, read: queryOf, keyOf: (c) => (c.req.url.includes("?") ? undefined : "") });
  if (request?.params) checks.push({ target: "param", schema: request.params as z.ZodType, read: (c) => c.req.param(), keyOf: (c) => c.req.path });
  const content = request?.body?.content;
  if (content) {
    const types = Object.keys(content);
    const media = content["application/json"];
    const schema = media && "schema" in media ? media.schema : undefined;
    if (types.length !== 1 || !schema) throw new Error(`${where}: only an application/json body is checked (declared: ${types.join(", ")})`);
    if (bodyLimit === undefined) throw new Error(`${where}: a JSON body needs jsonBody(limit) in the route's middleware`);
    const hint = bodyHint(schema as z.ZodType);
    checks.push({
      target: "json",
      schema: schema as z.ZodType,
      read: (_c, body) => parseJsonBody(body ?? "{}", hint),
      hint,
    });
  }
  return checks;
}

/** The query as Hono's validator gives it: a value per name, an array for a repeated name. */
function queryOf(c: Context): Record<string, string | string[]> {
  if (!c.req.url.includes("?")) return {};
  return Object.fromEntries(Object.entries(c.req.queries()).map(([k, v]) => [k, v.length === 1 ? (v[0] as string) : v]));
}
