import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { EmulatorError } from "../domain/errors.js";

/** The header that carries the control key when `Authorization` is taken by something else. */
export const CONTROL_KEY_HEADER = "x-minipod-control-key";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * The cookie the dashboard's browser carries once unlocked with `/?key=<controlKey>`, named after
 * the port (a browser sends a host's cookies to every port of it: two minipods on one host keep
 * their own), sent to `/_emulator` and `/_dashboard` only, never to the service routes (and the
 * workers behind `/lb`). No `__Host-` prefix: it needs `Secure` (https) and `Path=/`.
 */
export const controlKeyCookie = (url: string): string => {
  const u = new URL(url);
  return `minipod_control_key_${u.port || (u.protocol === "https:" ? "443" : "80")}`;
};

/** The paths the cookie is sent to: the control API and the dashboard (its page is also at `/_dashboard`). */
const COOKIE_PATHS = ["/_emulator", "/_dashboard"];

/** The key a request offers: `Authorization: Bearer <key>`, `X-Minipod-Control-Key: <key>`, or the dashboard's cookie. */
function offered(authorization: string | undefined, header: string | undefined, cookie: string | undefined, name: string): string | undefined {
  if (header) return header.trim();
  const m = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? "");
  if (m?.[1]) return m[1].trim();
  const c = cookie?.split(/;\s*/).find((p) => p.startsWith(`${name}=`));
  if (!c) return undefined;
  const value = c.slice(name.length + 1);
  try {
    return decodeURIComponent(value);
  } catch {
    // Malformed percent-encoding (a page on another port of the host can plant any cookie): the
    // value as sent, which matches no key, so the answer is 401.
    return value;
  }
}

/**
 * Guards the control API (`/_emulator/*`) with the configured `controlKey`, so that a minipod bound
 * beyond loopback cannot be reset, time-travelled or exported by anyone who reaches it. Without a
 * key configured every request passes, as before. Keys are compared by digest in constant time.
 */
export function controlAuth(controlKey: string | undefined, page = false): MiddlewareHandler {
  if (!controlKey) return async (_c, next) => next();
  const expected = digest(controlKey);
  const matches = (key: string | undefined) => key !== undefined && timingSafeEqual(digest(key), expected);
  return async (c, next) => {
    // The dashboard page is unlocked once with /?key=<controlKey>: the key moves into cookies
    // (same site, not readable by scripts) that the page's own requests then carry, at /_dashboard.
    const name = controlKeyCookie(c.req.url);
    const fromQuery = page ? c.req.query("key") : undefined;
    if (matches(fromQuery)) {
      for (const path of COOKIE_PATHS) c.header("set-cookie", `${name}=${encodeURIComponent(fromQuery!)}; Path=${path}; HttpOnly; SameSite=Strict`, { append: true });
      return c.redirect("/_dashboard", 303);
    }
    const key = offered(c.req.header("authorization"), c.req.header(CONTROL_KEY_HEADER), c.req.header("cookie"), name);
    // The page at / is not sent the cookie: the browser is led to where it is.
    if (page && key === undefined && fromQuery === undefined) return c.redirect("/_dashboard", 303);
    if (!matches(key)) {
      c.header("www-authenticate", 'Bearer realm="minipod control"');
      throw new EmulatorError(
        "UNAUTHORIZED",
        key === undefined
          ? page || c.req.path.startsWith("/_dashboard")
            ? "the dashboard needs the control key: open /?key=<controlKey> once in this browser"
            : `the control API needs the control key: send Authorization: Bearer <controlKey> or ${CONTROL_KEY_HEADER}: <controlKey>`
          : "the control key is wrong: it is controlKey of minipod's config",
      );
    }
    await next();
  };
}
