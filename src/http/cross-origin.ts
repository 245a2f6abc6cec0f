import type { Context, MiddlewareHandler } from "hono";
import { EmulatorError } from "../domain/errors.js";

/** Methods a web page can send to another origin without a CORS preflight, or with one, that change state. */
const WRITES = new Set(["POST", "PUT", "PATCH"]);

export interface SameOriginOptions {
  /** A top-level navigation from another site is let through (a link to the dashboard page): it cannot read the answer. */
  navigable?: boolean;
  /** Requests that change state must say `Content-Type: application/json`. */
  jsonWrites?: boolean;
}

/** The request's own origin, as a browser would write it: `http://` and its Host. */
const ownOrigin = (c: Context): string => new URL(c.req.url).origin;

/** Whether an `Origin` header names the request's own origin; "null" (a sandboxed or opaque origin) never does. */
function sameOrigin(origin: string, own: string): boolean {
  if (!URL.canParse(origin)) return false;
  return new URL(origin).origin === own;
}

/**
 * Keeps web pages of other origins off the emulator's own surface (the control API, the
 * dashboard, the feed and the export), whether they would change its state or read it.
 *
 * As Go's `net/http.CrossOriginProtection` does: a browser says where a request comes from in
 * `Sec-Fetch-Site`, and only `same-origin` (the dashboard's own page) and `none` (the user typed
 * the URL or opened a bookmark) pass; `same-site` is refused too, since another port of localhost
 * is the same site but not the same origin. A browser too old for `Sec-Fetch-Site` still sends
 * `Origin` on anything but a simple GET, and it must name the request's own origin. A request
 * with neither comes from outside a browser (a test, curl, an SDK) and passes: those cannot be
 * made to act by a web page.
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
    const site = c.req.header("sec-fetch-site");
    let from: string | undefined;
    if (site !== undefined) {
      const navigation = options.navigable && method === "GET" && c.req.header("sec-fetch-mode") === "navigate" && c.req.header("sec-fetch-dest") === "document";
      if (site !== "same-origin" && site !== "none" && !navigation) from = `${c.req.header("origin") ?? "a page"} (Sec-Fetch-Site: ${site})`;
    } else {
      const origin = c.req.header("origin");
      if (origin !== undefined && !sameOrigin(origin, ownOrigin(c))) from = `${origin} (Origin)`;
    }
    if (from !== undefined) {
      throw new EmulatorError(
        "FORBIDDEN",
        `cross-origin request refused: ${c.req.path} answers only pages of its own origin, ${ownOrigin(c)}, and clients outside a browser; this one came from ${from}. Drive minipod from your tests, scripts or server code, or from its own dashboard`,
      );
    }
    if (options.jsonWrites && WRITES.has(method)) {
      const type = c.req.header("content-type")?.split(";")[0]?.trim().toLowerCase();
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
