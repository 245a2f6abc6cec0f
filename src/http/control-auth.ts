import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { EmulatorError } from "../domain/errors.js";

/** The header that carries the control key when `Authorization` is taken by something else. */
export const CONTROL_KEY_HEADER = "x-minipod-control-key";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** The key a request offers: `Authorization: Bearer <key>` or `X-Minipod-Control-Key: <key>`. */
function offered(authorization: string | undefined, header: string | undefined): string | undefined {
  if (header) return header.trim();
  const m = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? "");
  return m?.[1]?.trim();
}

/**
 * Guards the control API (`/_emulator/*`) with the configured `controlKey`, so that a minipod bound
 * beyond loopback cannot be reset, time-travelled or exported by anyone who reaches it. Without a
 * key configured every request passes, as before. Keys are compared by digest in constant time.
 */
export function controlAuth(controlKey: string | undefined): MiddlewareHandler {
  if (!controlKey) return async (_c, next) => next();
  const expected = digest(controlKey);
  return async (c, next) => {
    const key = offered(c.req.header("authorization"), c.req.header(CONTROL_KEY_HEADER));
    if (key === undefined || !timingSafeEqual(digest(key), expected)) {
      c.header("www-authenticate", 'Bearer realm="minipod control"');
      throw new EmulatorError(
        "UNAUTHORIZED",
        key === undefined
          ? `the control API needs the control key: send Authorization: Bearer <controlKey> or ${CONTROL_KEY_HEADER}: <controlKey>`
          : "the control key is wrong",
      );
    }
    await next();
  };
}
