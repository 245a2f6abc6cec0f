import type { Context, MiddlewareHandler } from "hono";
import type { ErrorHandler } from "hono/types";
import { OPENAI_OPERATION } from "../domain/operations.js";
import type { ServiceRoute } from "./surfaces.js";
import { authenticate, authorize, type HeaderSink } from "./auth.js";
import type { Core } from "./core.js";
import type { AppEnv } from "./env.js";
import { after } from "./chain.js";
import { requestFault } from "./request-faults.js";
import type { RequestJournal } from "./journal.js";
import { queueAdmission, restQuota } from "./rate-limit.js";
import { routeInfo } from "./route-info.js";

/**
 * Authentication, the REST quota, the scope check and the queue limits of a service request, in
 * that order: the release of the queue slot it holds (undefined when none), or thrown, the error
 * to answer instead, with the headers that answer carries already on `answer`.
 */
export type Admission = (method: string, path: string, authorization: string | undefined, route: ServiceRoute, answer: HeaderSink) => (() => void) | undefined;

export function serviceAdmission(core: Pick<Core, "auth" | "rateLimits" | "scheduler" | "loadBalancers" | "endpoints">): Admission {
  const keys = core.auth;
  const quota = restQuota(core);
  const admission = queueAdmission(core);
  return (method, path, authorization, route, answer) => {
    const caller = authenticate(authorization, answer, keys, route);
    quota(answer, caller);
    authorize(method, path, caller);
    return admission(method, caller, answer);
  };
}

/** The request log line, written at info: `POST /v2/echo/run 200 0.4ms`. */
export const requestLogLine = (method: string, path: string, status: number, startedMs: number): string =>
  `${method} ${path} ${status} ${(performance.now() - startedMs).toFixed(1)}ms`;

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
 *
 * `DirectRoutes` (direct.ts) takes the same steps, through `Admission`, `RequestJournal` and
 * `requestLogLine`, for the requests it answers before the app: a step added here belongs there
 * too (test/e2e/direct-routes.test.ts compares the two).
 */
export function requestGate(core: Core, onError: ErrorHandler<AppEnv>, journal: RequestJournal, admit: Admission): MiddlewareHandler<AppEnv> {
  const { log, faults } = core;
  // Job writes are committed at the end of the event-loop turn: no answer to a request that may
  // have written leaves before they are, so what a client was told is in the database.
  const durable = (c: Context<AppEnv>) => (c.req.method === "GET" || c.req.method === "HEAD" ? undefined : core.jobStore.whenDurable());
  const logLine = (c: Context<AppEnv>, startedMs: number) => log.info(requestLogLine(c.req.method, c.req.path, c.res.status, startedMs));

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
    if (!path.startsWith("/v1/") && !path.startsWith("/v2/") && !path.startsWith("/lb/")) {
      return after(
        after(next(), () => durable(c)),
        () => {
          if (log.enabled("info")) logLine(c, startedMs);
        },
      );
    }
    const method = c.req.method;
    const route = core.paths.classify(method, path);
    if (route.operation === OPENAI_OPERATION && route.surface === "queue") c.set("openAi", true);
    const info = routeInfo(path, route);
    const at = journal.enabled ? journal.now() : 0;
    let release: (() => void) | undefined;
    const admitted = () => {
      release = admit(method, path, c.req.header("authorization"), route, c);
      if (release !== undefined && route.operation === OPENAI_OPERATION) {
        c.set("keepSlot", () => {
          const kept = release ?? (() => {});
          release = undefined;
          return kept;
        });
      }
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
