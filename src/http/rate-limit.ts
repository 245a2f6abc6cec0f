import type { MiddlewareHandler } from "hono";
import { EmulatorError } from "../domain/errors.js";
import type { Core } from "./core.js";
import { rateLimitHeader, rateLimitPolicyHeader } from "./rate-limit-headers.js";

/**
 * REST quotas per API key (`/v1/*` and the `/v2` resources): every answer to an authenticated,
 * non-exempt caller carries `RateLimit` and `RateLimit-Policy`; over quota → 429 with
 * `Retry-After` for the window that resets last among the exhausted ones. Runs after
 * `authenticate` (it needs the key) and before `authorize`, so a 403 is counted and carries the
 * headers too, as the real service's ForbiddenError does.
 */
export function restRateLimit(core: Pick<Core, "rateLimits">): MiddlewareHandler {
  const limits = core.rateLimits;
  const policy = rateLimitPolicyHeader(limits.rest.policy());
  return async (c, next) => {
    const caller = c.get("caller");
    if (caller.route.surface !== "rest" || caller.rateLimitExempt || !limits.enabled) return next();
    const decision = limits.rest.take(caller.key);
    // Set before `next()`: error answers (404, 400, 403, this 429) are built on the same headers.
    c.header("ratelimit", rateLimitHeader(decision.windows));
    c.header("ratelimit-policy", policy);
    if (decision.exceeded) {
      throw new EmulatorError("RATE_LIMITED", `rate limit exceeded for the ${decision.exceeded.name} window`, { retryAfter: decision.exceeded.resetSeconds });
    }
    await next();
  };
}

/**
 * The specification's queue limits per endpoint and operation (requests per 10 s, requests at
 * once, the dynamic rule on running workers). Runs after `authorize`. Unknown endpoints are left
 * to answer 404 without keeping any count for them.
 */
export function queueRateLimit(core: Pick<Core, "rateLimits" | "scheduler">): MiddlewareHandler {
  const { rateLimits, scheduler } = core;
  return async (c, next) => {
    const { route } = c.get("caller");
    if (route.surface !== "queue" || route.operation === undefined || !rateLimits.enabled || !scheduler.has(route.endpointId!)) return next();
    const endpointId = route.endpointId!;
    const release = rateLimits.queue.admit(endpointId, route.operation, c.req.method, () => scheduler.pool(endpointId)?.counts().running ?? 0);
    try {
      await next();
    } finally {
      release();
    }
  };
}
