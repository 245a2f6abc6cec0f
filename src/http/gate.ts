import { OPENAI_OPERATION } from "../domain/operations.js";
import type { ServiceRoute } from "./surfaces.js";
import { authenticate, authorize, type HeaderSink } from "./auth.js";
import type { Core } from "./core.js";
import { after } from "./chain.js";
import { requestFault } from "./request-faults.js";
import type { JournalSource, RequestJournal } from "./journal.js";
import { queueAdmission, restQuota } from "./rate-limit.js";
import { routeInfo, type RouteInfo } from "./route-info.js";

/**
 * Authentication, the REST quota, the scope check and the queue limits of a service request, in
 * that order: the release of the queue slot it holds (undefined when none), or thrown, the error
 * to answer instead, with the headers that answer carries already on `answer`. A request a route
 * passed on (`passedOn`), whose client was admitted already as it called, takes only the queue
 * limits of the endpoint it goes to.
 */
export type Admission = (method: string, path: string, authorization: string | undefined, route: ServiceRoute, answer: HeaderSink, passedOn?: boolean) => (() => void) | undefined;

export function serviceAdmission(core: Pick<Core, "auth" | "rateLimits" | "scheduler" | "loadBalancers" | "endpoints">): Admission {
  const keys = core.auth;
  const quota = restQuota(core);
  const admission = queueAdmission(core);
  return (method, path, authorization, route, answer, passedOn) => {
    if (passedOn) return admission(method, route, answer);
    const caller = authenticate(authorization, answer, keys, route);
    quota(answer, caller);
    authorize(method, path, caller);
    return admission(method, route, answer);
  };
}

/** The request log line, written at info: `POST /v2/echo/run 200 0.4ms`. */
export const requestLogLine = (method: string, path: string, status: number, startedMs: number): string =>
  `${method} ${path} ${status} ${(performance.now() - startedMs).toFixed(1)}ms`;

/**
 * A request as the gate sees it, whichever entry of the route table answers it: Hono's context
 * (`hono-exchange.ts`) or node's request and response (`raw-exchange.ts`). The gate reads it,
 * puts its headers on it, and has it answer an error; the entry gives the route's answer.
 */
export interface Exchange extends HeaderSink, JournalSource {
  readonly method: string;
  readonly path: string;
  authorization(): string | undefined;
  /** The route's answer, once the gate has passed it: a promise while it is being made. */
  next(): unknown;
  /** The answer becomes the problem `err` (a promise while it is being made). */
  fail(err: unknown): unknown;
  /** Cuts the connection (an injected reset): false where there is none to cut (in process). */
  drop(): boolean;
  /** The service route it addresses and what the journal names, when the entry knows them already (kept with its path). */
  readonly service?: { route: ServiceRoute; info: RouteInfo } | undefined;
  /** The service route it addresses, once classified (Hono's answers on OpenAI routes take OpenAI's shape). */
  classified?(route: ServiceRoute): void;
  /** Whether its route passed it on to another, whose entry the journal keeps instead of this one's. */
  forwarded?(): boolean;
  /**
   * Whether it is the request a route passed on (see `forwarded`): its client passed the gate as it
   * called, so it passes only what depends on where it goes (its endpoint's queue limits, the
   * journal's entry, the commit), not a second log line, fault or authentication.
   */
  passedOn?(): boolean;
  /**
   * Called once the answer is made: an entry that writes it itself does so now, before the journal's
   * entry and the log line are made (in the same turn); after them when its body is still being read.
   */
  answered?(): void;
  /**
   * On an OpenAI route, which may keep the queue slot while its answer streams: `take` hands it
   * the slot's release, which the gate then leaves alone.
   */
  keepSlot?(take: () => () => void): void;
}

/** Paths of the service's surfaces: the journal, faults and admission apply to them. */
const isServicePath = (path: string): boolean => path.startsWith("/v1/") || path.startsWith("/v2/") || path.startsWith("/lb/");

/**
 * What every request passes before its route, written once and run for every entry of the route
 * table (the routes answered from node's request and those answered through Hono alike), with
 * one classification of the path: the request log line, and on service routes (`/v1/*`, `/v2/*`,
 * `/lb/*`) the journal, injected request faults (before authentication, as a failing network or
 * service would act), then authentication, the REST quota, the scope check and the queue limits.
 *
 * Answers to requests other than GET and HEAD wait for the commit of the job writes made so far.
 *
 * It waits only for what is pending (a fault's delay, the body, the commit): a request that waits
 * for nothing is answered in the turn it arrived (see `chain`). An error thrown here is answered
 * by the exchange at once, so the journal and the log still see its status.
 */
export class Gate {
  constructor(
    private readonly core: Pick<Core, "log" | "faults" | "paths" | "jobStore" | "clock" | "snapshots">,
    private readonly journal: RequestJournal,
    private readonly admit: Admission,
  ) {}

  /** Passes `x` through every step and its route: settled (a promise when something waited) once the answer is made and recorded. */
  pass(x: Exchange): unknown {
    // A snapshot being restored: the request waits for it to end (it sees the old state or the
    // new, never part of each). Requests from minipod's socket waited already (pipeline.ts).
    const held = this.core.snapshots.held();
    if (held) return held.then(() => this.pass(x));
    const startedMs = performance.now();
    const path = x.path;
    if (!isServicePath(path)) return after(after(x.next(), () => this.durable(x)), () => this.logLine(x, startedMs));
    const { journal, core } = this;
    const method = x.method;
    const route = x.service?.route ?? core.paths.classify(method, path);
    x.classified?.(route);
    const info = x.service?.info ?? routeInfo(path, route);
    const at = journal.enabled ? journal.now() : 0;
    const passedOn = x.passedOn?.() === true;
    let release: (() => void) | undefined;
    const admitted = () => {
      release = this.admit(method, path, x.authorization(), route, x, passedOn);
      if (release !== undefined && route.operation === OPENAI_OPERATION) {
        x.keepSlot?.(() => {
          const kept = release ?? (() => {});
          release = undefined;
          return kept;
        });
      }
      return after(x.next(), () => this.durable(x));
    };
    // An entry that writes its own answer (`answered`) writes it before the journal's entry and the
    // log line are made, in the same turn: no request can read the journal in between, and the
    // client, woken by the answer, no longer waits for minipod's bookkeeping. One whose body is
    // still being read for the journal is answered once it is recorded, as through Hono.
    const recorded = () => {
      release?.();
      const journaled = journal.enabled && x.forwarded?.() !== true;
      const first = x.answered !== undefined && !(x.bodyText() instanceof Promise);
      if (first) x.answered!();
      return after(journaled ? journal.record(x, info, at, startedMs) : undefined, () => {
        if (!passedOn) this.logLine(x, startedMs);
        if (!first) x.answered?.();
      });
    };
    let outcome: unknown;
    try {
      const fault = passedOn ? undefined : requestFault(x, core.faults, core.log, info, core.clock.wall);
      outcome = fault ? fault.then((dropped) => (dropped ? undefined : admitted())) : admitted();
    } catch (err) {
      return after(x.fail(err), recorded);
    }
    // One step for either way it settles: each step more is a turn of the microtask queue on every /run.
    if (outcome instanceof Promise) return outcome.then(recorded, (err: unknown) => after(x.fail(err), recorded));
    return recorded();
  }

  /** Job writes are committed at the end of the event-loop turn: no answer to a request that may have written leaves before they are. */
  private durable(x: Exchange): Promise<void> | undefined {
    return x.method === "GET" || x.method === "HEAD" ? undefined : this.core.jobStore.whenDurable();
  }

  private logLine(x: Exchange, startedMs: number): void {
    if (this.core.log.enabled("info")) this.core.log.info(requestLogLine(x.method, x.path, x.status(), startedMs));
  }
}
