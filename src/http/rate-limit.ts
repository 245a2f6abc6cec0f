import { EmulatorError } from "../domain/errors.js";
import { LOAD_BALANCER_OPERATION } from "../domain/operations.js";
import type { Caller, HeaderSink } from "./auth.js";
import type { Core } from "./core.js";
import type { ServiceRoute } from "./surfaces.js";
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
 * to answer 404 without keeping any count for them. Requests to a load-balancing endpoint are one
 * operation, `lb`, of the same table (the dynamic rule on its ready workers), and every answer to
 * them, the 429 too, says what is left in `RateLimit` and `RateLimit-Policy`.
 */
export function queueAdmission(core: Pick<Core, "rateLimits" | "scheduler" | "loadBalancers" | "endpoints">): (method: string, route: ServiceRoute, answer: HeaderSink) => (() => void) | undefined {
  const { rateLimits, scheduler, loadBalancers, endpoints } = core;
  return (method, route, answer) => {
    if (route.surface !== "queue" || route.operation === undefined || !rateLimits.enabled) return undefined;
    const endpointId = route.endpointId!;
    if (route.operation === LOAD_BALANCER_OPERATION) {
      if (!endpoints.has(endpointId, "LOAD_BALANCER")) return undefined;
      const ready = () => loadBalancers.status(endpointId)?.workers.ready ?? 0;
      return rateLimits.queue.admit(endpointId, LOAD_BALANCER_OPERATION, method, ready, (w) => {
        answer.header("ratelimit", `"${LOAD_BALANCER_OPERATION}";r=${w.remaining};t=${w.resetSeconds}`);
        answer.header("ratelimit-policy", `"${LOAD_BALANCER_OPERATION}";q=${w.quota};w=${w.windowSeconds}`);
      });
    }
    if (!endpoints.has(endpointId, "QUEUE")) return undefined;
    return rateLimits.queue.admit(endpointId, route.operation, method, () => scheduler.pool(endpointId)?.counts().running ?? 0);
  };
}
