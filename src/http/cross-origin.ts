import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context, MiddlewareHandler } from "hono";
import { EmulatorError } from "../domain/errors.js";
import type { Logger } from "../domain/logger.js";
import { requestLogLine } from "./gate.js";
import { writeProblem } from "./problem.js";

/** Methods a web page can send to another origin without a CORS preflight, or with one, that change state. */
const WRITES = new Set(["POST", "PUT", "PATCH"]);
/** Methods that change nothing: every other one may. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/**
 * The media types a page of another origin can have the browser send without a preflight: a
 * form's, a no-cors fetch's or a beacon's, and a CSP violation report's (`report-uri`, which the
 * browser posts by itself, to any address a page's policy names).
 */
const SIMPLE_TYPES = new Set(["application/x-www-form-urlencoded", "multipart/form-data", "text/plain", "application/csp-report"]);
/** Authorization schemes a browser sends by itself, from its HTTP authentication cache, with no page asking. */
const BROWSER_AUTH = /^\s*(basic|digest|negotiate|ntlm)\b/i;
/** Origins named in the log when refused, once each. */
const ORIGINS_LOGGED = 100;

export interface SameOriginOptions {
  /** A top-level navigation from another site is let through (a link to the dashboard page): it cannot read the answer. */
  navigable?: boolean;
  /** Requests that change state must say `Content-Type: application/json`. */
  jsonWrites?: boolean;
}

type HeaderOf = (name: string) => string | undefined;

/** A request's media type, lower-cased, without its parameters; undefined when it has none. */
const mediaType = (header: HeaderOf): string | undefined => header("content-type")?.split(";")[0]?.trim().toLowerCase() || undefined;

/** Whether an `Origin` header names `own`; "null" (a sandboxed or opaque origin) never does. */
function sameOrigin(origin: string, own: string): boolean {
  if (!URL.canParse(origin) || !URL.canParse(own)) return false;
  return new URL(origin).origin === new URL(own).origin;
}

/**
 * The page of another origin a request comes from, as the log and the refusal name it, or
 * undefined when it comes from a page of its own origin or from outside a browser.
 *
 * As Go's `net/http.CrossOriginProtection` reads it: a browser says where a request comes from in
 * `Sec-Fetch-Site`, and only `same-origin` (the dashboard's own page) and `none` (the user typed
 * the URL or opened a bookmark) are its own; `same-site` is not, since another port of localhost
 * is the same site but not the same origin. A browser too old for `Sec-Fetch-Site` still sends
 * `Origin` on anything but a simple GET, and it must name `own`. A request with neither comes
 * from outside a browser (a test, curl, an SDK), which no web page can make act.
 */
export function foreignPage(header: HeaderOf, own: string, navigation = false): string | undefined {
  const site = header("sec-fetch-site");
  if (site !== undefined) {
    if (site === "same-origin" || site === "none" || navigation) return undefined;
    return `${header("origin") ?? "a page"} (Sec-Fetch-Site: ${site})`;
  }
  const origin = header("origin");
  return origin !== undefined && !sameOrigin(origin, own) ? `${origin} (Origin)` : undefined;
}

/**
 * Whether a request carries what a page of another origin can send only after a CORS preflight,
 * which minipod never grants: an `Authorization` header of its own (a key), or a `Content-Type`
 * other than a form's, `text/plain` or a CSP report's (`application/json`). A form, a no-cors
 * fetch, a beacon and a CSP report can carry neither.
 */
export function preflighted(header: HeaderOf): boolean {
  const authorization = header("authorization");
  if (authorization !== undefined && !BROWSER_AUTH.test(authorization)) return true;
  const type = mediaType(header);
  return type !== undefined && !SIMPLE_TYPES.has(type);
}

/**
 * The one rule for writes from browsers, on every route: a request that may change state (any
 * method but GET, HEAD and OPTIONS) from a page of another origin is refused unless it carries
 * what only a preflight would let that page send. Such a page can make a browser send a form
 * post, a no-cors fetch or a beacon to any address without asking; none of them can carry a key
 * in a header, so a write that names its key only in the URL (`/graphql?api_key=`) or needs none
 * (with no `auth.keys`, any key is accepted) is not taken from one. A dev server's proxy, which
 * passes on the page's own `Origin` with its key, still passes. The refusal, or undefined.
 */
export function crossOriginWrite(method: string, path: string, header: HeaderOf, own: string): EmulatorError | undefined {
  if (SAFE_METHODS.has(method)) return undefined;
  const from = foreignPage(header, own);
  if (from === undefined || preflighted(header)) return undefined;
  return new EmulatorError(
    "FORBIDDEN",
    `cross-origin write refused: ${method} ${path} came from a page of another origin, ${from}, with nothing a page may only send after asking (an Authorization header, a JSON body): a web page may not change minipod's state. Call minipod from your tests, scripts or server code, or from a page of its own origin (through your dev server's proxy)`,
  );
}

/**
 * The node listener's step that applies `crossOriginWrite` to every request on minipod's socket,
 * before any route (those answered before the app included): answers a refused one with 403 (and
 * returns true), logging its request line and, once per origin, why.
 */
export function crossOriginGuard(log: Logger): (req: IncomingMessage, res: ServerResponse) => boolean {
  const logged = new Set<string>();
  return (req, res) => {
    const method = req.method ?? "GET";
    // Reads, and clients outside a browser (SDKs, workers: almost every write), leave at once.
    if (SAFE_METHODS.has(method) || (req.headers["sec-fetch-site"] === undefined && req.headers.origin === undefined)) return false;
    const startedMs = performance.now();
    const path = (req.url ?? "/").split("?")[0]!;
    const header: HeaderOf = (name) => req.headers[name] as string | undefined;
    const err = crossOriginWrite(method, path, header, `http://${req.headers.host ?? ""}`);
    if (err === undefined) return false;
    const origin = req.headers.origin ?? "";
    if (logged.size < ORIGINS_LOGGED && !logged.has(origin)) {
      logged.add(origin);
      log.warn(err.message);
    }
    writeProblem(res, err);
    if (log.enabled("info")) log.info(requestLogLine(method, path, 403, startedMs));
    return true;
  };
}

/** The request's own origin, as a browser would write it: `http://` and its Host. */
const ownOrigin = (c: Context): string => new URL(c.req.url).origin;

/**
 * Keeps web pages of other origins off the emulator's own surface (the control API, the
 * dashboard, the feed and the export), whether they would change its state or read it: every
 * request from one (`foreignPage`) is refused, but for a top-level navigation when `navigable`.
 *
 * With `jsonWrites`, a POST (or PUT, PATCH) must also say `Content-Type: application/json`: a
 * page can send a form or `text/plain` body to any origin without asking, but JSON only after a
 * CORS preflight, which minipod never grants. DELETE is never sent cross-origin without one.
 * Answers carry `Cross-Origin-Resource-Policy: same-origin`, so no page of another origin can
 * embed them (a script or an image) either.
 */
export function sameOriginOnly(options: SameOriginOptions = {}): MiddlewareHandler {
  return async (c, next) => {
    c.header("cross-origin-resource-policy", "same-origin");
    const method = c.req.method;
    const header: HeaderOf = (name) => c.req.header(name);
    const navigation = options.navigable === true && method === "GET" && header("sec-fetch-mode") === "navigate" && header("sec-fetch-dest") === "document";
    const from = foreignPage(header, ownOrigin(c), navigation);
    if (from !== undefined) {
      throw new EmulatorError(
        "FORBIDDEN",
        `cross-origin request refused: ${c.req.path} answers only pages of its own origin, ${ownOrigin(c)}, and clients outside a browser; this one came from ${from}. Drive minipod from your tests, scripts or server code, or from its own dashboard`,
      );
    }
    if (options.jsonWrites && WRITES.has(method)) {
      const type = mediaType(header);
      if (type !== "application/json") {
        throw new EmulatorError(
          "UNSUPPORTED_MEDIA_TYPE",
          `${method} ${c.req.path} changes the emulator's state and needs Content-Type: application/json (a body of {} will do; curl: -H 'content-type: application/json'), got ${type ? `'${type}'` : "none"}: a web page cannot send JSON to another origin without asking first`,
        );
      }
    }
    await next();
  };
}
