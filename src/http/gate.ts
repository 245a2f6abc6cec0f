import type { Context, MiddlewareHandler } from "hono";
import type { ErrorHandler } from "hono/types";
import { classifyServiceRoute } from "../domain/surfaces.js";
import { authenticate, authorize } from "./auth.js";
import type { Core } from "./core.js";
import type { AppEnv } from "./env.js";
import { after } from "./chain.js";
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
 * One function rather than a chain of seven, which each re-read what the first had classified,
 * and one that waits only for what is pending (a fault's delay, the body, the commit): a request
 * that waits for nothing is answered in the turn it arrived (see `chain`). An error thrown here is
 * answered by `onError` at once, so the journal and the log still see its status.
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

  /** `c.res` becomes `onError`'s answer to `err`. */
  const answer = (c: Context<AppEnv>, err: unknown) =>
    after(onError(err as Error, c), (res) => {
      c.res = res;
    });

  // Written to answer without a promise when nothing waits (see `chain`): a GET /status passes
  // the whole gate in the turn its request arrived. Under Hono's own compose it is awaited as any
  // middleware.
  const gate = (c: Context<AppEnv>, next: () => unknown): void | Promise<void> => {
    const startedMs = performance.now();
    const path = c.req.path;
    if (!path.startsWith("/v1/") && !path.startsWith("/v2/")) {
      return after(
        after(next(), () => durable(c)),
        () => {
          if (log.enabled("info")) logLine(c, startedMs);
        },
      );
    }
    const method = c.req.method;
    const route = classifyServiceRoute(method, path);
    const info = routeInfo(path, route);
    const at = journal.enabled ? journal.now() : 0;
    let release: (() => void) | undefined;
    const admitted = () => {
      const caller = authenticate(c, auth, route);
      quota(c, caller);
      authorize(c, caller);
      release = admission(c, caller);
      return after(next(), () => durable(c));
    };
    const passed = () => {
      const fault = requestFault(c, faults, log, info);
      if (!fault) return admitted();
      return fault.then((dropped) => {
        if (!dropped) return admitted();
        c.res = dropped;
        return undefined;
      });
    };
    let outcome: unknown;
    try {
      outcome = passed();
      if (outcome instanceof Promise) outcome = outcome.then(undefined, (err: unknown) => answer(c, err));
    } catch (err) {
      outcome = answer(c, err);
    }
    return after(outcome, () => {
      release?.();
      return after(journal.enabled ? journal.record(c, info, at, startedMs) : undefined, () => {
        if (log.enabled("info")) logLine(c, startedMs);
      });
    });
  };
  return gate as unknown as MiddlewareHandler<AppEnv>;
}
