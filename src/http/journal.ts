import type { MiddlewareHandler } from "hono";
import type { VirtualClock } from "../domain/clock.js";
import type { ObservabilityStore } from "../domain/observability.js";
import { redact } from "../domain/redact.js";
import type { AppEnv } from "./env.js";
import { routeInfo } from "./route-info.js";

const BODY_KEPT_BYTES = 64 * 1024;
const TRIM_EVERY = 1000;

/**
 * Classifies every request (endpoint, operation) for the middleware after it, and writes each
 * service request to the journal once answered: method, path, endpoint, operation, status (0 when
 * the connection was dropped), virtual time, duration, and the body with secrets redacted. The
 * Authorization header is never kept.
 */
export function journalMiddleware(store: ObservabilityStore, clock: VirtualClock, keep: number): MiddlewareHandler<AppEnv> {
  let written = 0;
  return async (c, next) => {
    const info = routeInfo(c.req.method, c.req.path);
    c.set("route", info);
    if (!info.service || keep === 0) return next();
    const at = clock.now();
    const t0 = performance.now();
    await next();
    const cached = (c.req.bodyCache as { text?: Promise<string> }).text;
    store.appendRequest({
      method: c.req.method,
      path: c.req.path,
      endpoint: info.endpoint,
      operation: info.operation,
      status: c.get("dropped") ? 0 : c.res.status,
      at,
      durationMs: Math.round((performance.now() - t0) * 100) / 100,
      body: cached ? keptBody(await cached) : undefined,
    });
    if (++written % TRIM_EVERY === 0) store.trimRequests(keep);
  };
}

function keptBody(text: string): unknown {
  if (text.length > BODY_KEPT_BYTES) return `[${text.length} bytes, not kept]`;
  try {
    return redact(JSON.parse(text));
  } catch {
    return "[not JSON]";
  }
}
