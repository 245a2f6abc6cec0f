import type { Context, MiddlewareHandler } from "hono";
import type { ErrorHandler } from "hono/types";
import { classifyServiceRoute } from "../domain/surfaces.js";
import { authenticate, authorize } from "./auth.js";
import type { Core } from "./core.js";
import type { AppEnv } from "./env.js";
import { requestFault } from "./faults.js";
import { RequestJournal } from "./journal.js";
import { queueAdmission, restQuota } from "./rate-limit.js";
import { routeInfo } from "./route-info.js";

/**
 * What every request passes before its route, in one middleware and with one classification of
 * the path: the request log line, and on service routes (`/v1/*`, `/v2/*`) the journal, injected
 * request faults (before authentication, as a failing network or service would act), then
 * authentication, the REST quota, the scope check and the queue limits.
 *
 * Answers to requests other than GET and HEAD wait for the commit of the job writes made so far.
 *
 * One function rather than a chain of seven: each link of a Hono chain costs an async call and a
 * promise per request, and each re-read what the first had classified; on `GET /status` the
 * chain cost as much as the route itself. An error thrown here is answered by `onError` at once,
 * so the journal and the log still see its status.
 */
export function requestGate(core: Core, onError: ErrorHandler<AppEnv>): MiddlewareHandler<AppEnv> {
  const { log, faults, auth } = core;
  const journal = new RequestJournal(core.observe, core.clock, core.journalMax);
  const quota = restQuota(core);
  const admission = queueAdmission(core);
  // Job writes are committed at the end of the event-loop turn: no answer to a request that may
  // have written leaves before they are, so what a client was told is in the database.
  const durable = (c: Context<AppEnv>) => (c.req.method === "GET" || c.req.method === "HEAD" ? undefined : core.jobStore.whenDurable());
  const logLine = (c: Context<AppEnv>, startedMs: number) =>
    log.info(`${c.req.method} ${c.req.path} ${c.res.status} ${(performance.now() - startedMs).toFixed(1)}ms`);

  // `await` only on real promises: each await of a plain value still costs a turn of the microtask queue.
  return async (c, next) => {
    const startedMs = performance.now();
    const path = c.req.path;
    if (!path.startsWith("/v1/") && !path.startsWith("/v2/")) {
      await next();
      const committed = durable(c);
      if (committed) await committed;
      if (log.enabled("info")) logLine(c, startedMs);
      return;
    }
    const method = c.req.method;
    const route = classifyServiceRoute(method, path);
    const info = routeInfo(path, route);
    const at = journal.enabled ? journal.now() : 0;
    let release: (() => void) | undefined;
    try {
      const fault = requestFault(c, faults, log, info);
      const dropped = fault && (await fault);
      if (dropped) {
        c.res = dropped;
      } else {
        const caller = authenticate(c, auth, route);
        quota(c, caller);
        authorize(c, caller);
        release = admission(c, caller);
        await next();
        const committed = durable(c);
        if (committed) await committed;
      }
    } catch (err) {
      c.res = await onError(err as Error, c);
    } finally {
      release?.();
    }
    if (journal.enabled) {
      const recorded = journal.record(c, info, at, startedMs);
      if (recorded) await recorded;
    }
    if (log.enabled("info")) logLine(c, startedMs);
  };
}
