import { EmulatorError } from "../domain/errors.js";
import type { Caller, HeaderSink } from "./auth.js";
import type { Core } from "./core.js";
import { rateLimitHeader, rateLimitPolicyHeader } from "./rate-limit-headers.js";

/**
 * REST quotas per API key (`/v1/*` and the `/v2` resources): every answer to an authenticated,
 * non-exempt caller carries `RateLimit` and `RateLimit-Policy`; over quota → 429 (thrown) with
 * `Retry-After` for the window that resets last among the exhausted ones. Called after
 * authentication (it needs the key) and before `authorize`, so a 403 is counted and carries the
 * headers too, as the real service's ForbiddenError does.
 */
export function restQuota(core: Pick<Core, "rateLimits">): (answer: HeaderSink, caller: Caller) => void {
  const limits = core.rateLimits;
  const policy = rateLimitPolicyHeader(limits.rest.policy());
  return (answer, caller) => {
    if (caller.route.surface !== "rest" || caller.rateLimitExempt || !limits.enabled) return;
    const decision = limits.rest.take(caller.key);
    // Set before the route runs: error answers (404, 400, 403, this 429) are built on the same headers.
    answer.header("ratelimit", rateLimitHeader(decision.windows));
    answer.header("ratelimit-policy", policy);
    if (decision.exceeded) {
      throw new EmulatorError("RATE_LIMITED", `rate limit exceeded for the ${decision.exceeded.name} window`, { retryAfter: decision.exceeded.resetSeconds });
    }
  };
}

/**
 * The specification's queue limits per endpoint and operation (requests per 10 s, requests at
 * once, the dynamic rule on running workers), checked after `authorize`: throws 429, or returns
 * the release to call once answered (undefined when nothing is counted). Unknown endpoints are left
 * to answer 404 without keeping any count for them.
 */
export function queueAdmission(core: Pick<Core, "rateLimits" | "scheduler">): (method: string, caller: Caller) => (() => void) | undefined {
  const { rateLimits, scheduler } = core;
  return (method, { route }) => {
    if (route.surface !== "queue" || route.operation === undefined || !rateLimits.enabled || !scheduler.has(route.endpointId!)) return undefined;
    const endpointId = route.endpointId!;
    return rateLimits.queue.admit(endpointId, route.operation, method, () => scheduler.pool(endpointId)?.counts().running ?? 0);
  };
}
