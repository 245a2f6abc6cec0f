import { randomUUID } from "node:crypto";
import type { Context } from "hono";
import type { Activity, Release } from "../../domain/activity.js";
import { EmulatorError } from "../../domain/errors.js";
import type { FaultType } from "../../domain/faults.js";
import type { LbHandler } from "../../domain/load-balancer/balancer.js";
import { LB_PATH_PREFIX, LbRefusal, parseAffinity, type Lease, type LbWorker } from "../../domain/load-balancer/types.js";
import { LB_PAYLOAD_MAX_BYTES } from "../../domain/limits.js";
import type { Core } from "../core.js";
import type { AppEnv } from "../env.js";
import { pendingWrites } from "../pending-writes.js";
import { echoHandler, openAiFetchHandler, type FetchHandler } from "./in-process.js";
import { forward, WorkerStatusError } from "./proxy.js";

/** The fault that fells a load-balancing endpoint's worker as a request reaches it. */
export const LB_WORKER_FAULTS: ReadonlySet<FaultType> = new Set(["worker-crash"]);

/** The header that names the worker of an answer, and pins the next request to it. */
export const WORKER_ID_HEADER = "x-runpod-worker-id";

const MB = 1024 * 1024;

/** The 524's error, past 5.5 minutes of processing. */
export const TIMED_OUT = "request timed out: processing took longer than 5.5 minutes";

/** The 502's error when a worker's server answers nothing. */
export const answeredNothing = (workerId: string, cause: string): string => `bad gateway: worker ${workerId} answered nothing (${cause})`;

/** The 502's error when a worker's answer has a status no client can be given (outside 200–599). */
export const wrongStatus = (workerId: string, status: number): string =>
  `bad gateway: worker ${workerId} answered status ${status}, not a final HTTP status (200 to 599)`;

/** The 502's error when a worker's answer cannot be written to the client (a status text or header node or the web's Response refuses). */
export const cannotPass = (workerId: string, why: string): string => `bad gateway: worker ${workerId}'s answer cannot be passed on: ${why}`;

/** The headers and body of the service's answers that come from the load balancer rather than a worker: `{"error": "..."}`. */
export const refusalOf = (error: string, workerId?: string): { headers: Record<string, string>; body: string } => ({
  headers: { "content-type": "application/json", ...(workerId ? { [WORKER_ID_HEADER]: workerId } : {}) },
  body: JSON.stringify({ error }),
});

/** A load balancer's own answer (see `refusalOf`) as a web Response. */
export const refusal = (status: number, error: string, workerId?: string): Response => {
  const { headers, body } = refusalOf(error, workerId);
  return new Response(body, { status, headers });
};

/**
 * Answers a request to a load-balancing endpoint: refuses a body above 30 MB (413), waits for a
 * worker as the balancer decides (400 after 2 minutes, affinity's 400 and 404), hands the request
 * to the worker (its HTTP server, or its handler in this process), and relays the answer as it
 * comes, the worker named in `X-Runpod-Worker-Id`. The worker's slot is held until the answer has
 * ended; past 5.5 minutes of virtual time the exchange is cut (524). A worker that answers nothing
 * gives 502; a client that goes away aborts the request to the worker.
 */
export function loadBalancerServer(
  core: Pick<Core, "loadBalancers" | "clock" | "log" | "endpoints" | "faults" | "handlers" | "openAiSettings" | "workerConnections">,
): (c: Context<AppEnv>, endpointId: string) => Promise<Response> {
  const { loadBalancers, clock, log } = core;
  const inProcess = new Map<string, FetchHandler>();

  const handlerFor = (endpointId: string, handler: LbHandler, worker: LbWorker): FetchHandler => {
    if (handler.kind === "echo") return echoHandler(() => worker.id);
    if (handler.kind === "openai") return openAiFetchHandler(endpointId, clock, core.openAiSettings, () => `lb-${randomUUID()}`);
    if (handler.kind === "function") {
      if (handler.name === "scripted")
        throw new Error('the scripted handler answers queue jobs, not HTTP requests; give the endpoint "external", a worker\'s URL, "openai", "echo" or a fetch handler');
      let fn = inProcess.get(handler.name);
      if (!fn) inProcess.set(handler.name, (fn = core.handlers.resolve(handler.name) as unknown as FetchHandler));
      return fn;
    }
    throw new Error(`no in-process handler for ${handler.kind}`);
  };

  return async (c, endpointId) => {
    const handler = loadBalancers.handlerOf(endpointId);
    if (!handler) throw notLoadBalancer(endpointId, core.endpoints.specs("LOAD_BALANCER").map((s) => s.id));
    const req = c.req.raw;
    const url = new URL(req.url);
    // The path after the id's segment as it came (`/lb/%61pi/x` is api's `/x`), not cut at the decoded id's length.
    const idEnd = url.pathname.indexOf("/", LB_PATH_PREFIX.length + 1);
    const rest = idEnd === -1 ? "/" : url.pathname.slice(idEnd);
    const declared = Number(req.headers.get("content-length") ?? Number.NaN);
    if (declared > LB_PAYLOAD_MAX_BYTES) return tooLarge(declared);
    let body: ReadableStream<Uint8Array> | Uint8Array | null = req.body;
    // A body of unknown length is read first, up to the limit.
    if (body !== null && !Number.isFinite(declared)) {
      const read = await readUpTo(body, LB_PAYLOAD_MAX_BYTES);
      if (read === undefined) return tooLarge(undefined);
      body = read;
    }

    let lease: Lease;
    try {
      lease = await loadBalancers.acquire(endpointId, parseAffinity(req.headers.get(WORKER_ID_HEADER)));
    } catch (e) {
      if (e instanceof LbRefusal) return refusal(e.status, e.error);
      throw e;
    }
    const worker = lease.worker;
    // A worker-crash rule: the worker dies (a simulated one is gone and the pool scales a new one;
    // a process is out of the pool until its health says ready) as the request reaches it (502),
    // or `atMs` of virtual time into the request (see `crashTimer`).
    const crash = core.faults.fire(LB_WORKER_FAULTS, { endpoint: endpointId, operation: undefined });
    const fell = () => (worker.target ? loadBalancers.health(endpointId, worker.id, "unhealthy") : loadBalancers.remove(endpointId, worker.id));
    if (crash)
      log.warn(
        `fault ${crash.id} fired: worker-crash of worker ${worker.id} (${endpointId})${crash.fault.type === "worker-crash" && crash.fault.atMs !== undefined ? `, ${crash.fault.atMs} ms into the request` : ""}`,
      );
    if (crash && (crash.fault.type !== "worker-crash" || crash.fault.atMs === undefined)) {
      lease.release();
      fell();
      return refusal(502, `bad gateway: worker ${worker.id} crashed (fault rule ${crash.id})`, worker.id);
    }
    const upstream = new AbortController();
    const crashing = crash ? crashTimer(clock, (crash.fault as { atMs: number }).atMs, upstream, worker.id, crash.id) : undefined;
    const onClientGone = () => upstream.abort(new Error("the client went away"));
    if (req.signal.aborted) onClientGone();
    req.signal.addEventListener("abort", onClientGone, { once: true });
    let timedOut = false;
    lease.onTimeout(() => {
      timedOut = true;
      upstream.abort(new Error("processing took longer than 5.5 minutes"));
    });
    // An answer of minipod's own (a simulated worker) is waited for on virtual time (a cold start
    // is over; the built-in openai answer paces its tokens); a function's computing is real work.
    const waiting = worker.target ? undefined : clock.activity.waiting();
    // The body still coming from the client comes in real time: each wait for its next bytes is
    // real work, or the clock would skip past a body on its way to the exchange's 5.5 minutes.
    const arriving = !worker.target && body instanceof ReadableStream ? fromClient(body, clock.activity) : undefined;
    const done = () => {
      waiting?.();
      arriving?.over();
      req.signal.removeEventListener("abort", onClientGone);
      lease.release();
      // The crash comes now if the answer ended before it.
      if (crashing?.end()) fell();
    };

    let answer: Response;
    try {
      if (worker.target) {
        answer = await forward(core.workerConnections.app, new URL(worker.target.url), req.method, rest + url.search, req.headers, body, upstream.signal);
      } else {
        const fn = handlerFor(endpointId, handler, worker);
        const inner = new Request(new URL(rest + url.search, url.origin), {
          method: req.method,
          headers: req.headers,
          body: arriving?.body ?? body,
          signal: upstream.signal,
          duplex: "half",
        } as RequestInit);
        const working = handler.kind === "function" ? clock.activity.working() : undefined;
        try {
          answer = await raceAbort(Promise.resolve(fn(inner)), upstream.signal);
        } finally {
          working?.();
        }
        if (!(answer instanceof Response)) throw new Error(`the handler of endpoint ${endpointId} returned ${typeof answer}, not a Response`);
      }
    } catch (e) {
      done();
      if (crashing?.crashed) return refusal(502, `bad gateway: worker ${worker.id} crashed ${crashing.at} (fault rule ${crash!.id})`, worker.id);
      if (timedOut) return refusal(524, TIMED_OUT, worker.id);
      if (req.signal.aborted) return refusal(499, "the client went away", worker.id);
      if (e instanceof WorkerStatusError) {
        log.warn(`load balancer: worker ${worker.id} of ${endpointId} answered status ${e.status} to ${req.method} ${rest}; the client gets 502`);
        return refusal(502, wrongStatus(worker.id, e.status), worker.id);
      }
      if (worker.target) {
        log.warn(`load balancer: worker ${worker.id} of ${endpointId} answered nothing to ${req.method} ${rest}: ${(e as Error).message}`);
        return refusal(502, answeredNothing(worker.id, causeOf(e)), worker.id);
      }
      log.warn(`load balancer: the handler of ${endpointId} failed on ${req.method} ${rest}: ${(e as Error).stack ?? String(e)}`);
      return refusal(500, `the endpoint's handler failed: ${(e as Error).message}`, worker.id);
    }
    // A function's body is written in real time too (its own timers, its own I/O).
    try {
      // An answer of minipod's own waits on virtual time meanwhile: a piece still going out to a slow reader is real work (see pendingWrites).
      return relay(answer, worker.id, done, upstream, handler.kind === "function" && !worker.target ? () => clock.activity.working() : undefined, worker.target ? undefined : clock);
    } catch (e) {
      // An answer no client can be given (a status text or header the web's Response refuses): the slot is the worker's again.
      upstream.abort(e);
      done();
      log.warn(`load balancer: the answer of worker ${worker.id} of ${endpointId} to ${req.method} ${rest} cannot be passed on: ${(e as Error).message}`);
      return refusal(502, cannotPass(worker.id, (e as Error).message), worker.id);
    }
  };
}

/**
 * The worker's answer with its id, whose end (or the client's going away) frees the worker.
 * `working`, when given, marks each wait for the next part of the body as real work; `pending`,
 * each part handed to the client's socket until it has gone (see `pendingWrites`).
 */
function relay(
  answer: Response,
  workerId: string,
  done: () => void,
  upstream: AbortController,
  working?: () => () => void,
  pending?: Parameters<typeof pendingWrites>[1],
): Response {
  const headers = new Headers(answer.headers);
  headers.set(WORKER_ID_HEADER, workerId);
  if (!answer.body) {
    done();
    return new Response(null, { status: answer.status, statusText: answer.statusText, headers });
  }
  const reader = answer.body.getReader();
  // The time limit cuts an answer in the middle too (a handler in this process may not heed the signal).
  upstream.signal.addEventListener("abort", () => void reader.cancel(upstream.signal.reason).catch(() => {}), { once: true });
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      done();
    }
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const release = working?.();
      try {
        const next = await reader.read();
        release?.();
        if (next.done) {
          end();
          // Cut (the time limit, a crash): the client sees the body break, not end.
          if (upstream.signal.aborted) controller.error(upstream.signal.reason);
          else controller.close();
        } else {
          controller.enqueue(next.value);
        }
      } catch (e) {
        release?.();
        end();
        controller.error(e);
      }
    },
    cancel(reason) {
      end();
      upstream.abort(reason);
      return reader.cancel(reason).catch(() => {});
    },
  });
  return new Response(pending ? pendingWrites(body, pending) : body, { status: answer.status, statusText: answer.statusText, headers });
}

/**
 * A request's body as it comes from the client, each wait for its next bytes marked as real work
 * (see Activity): from the start (the handler's first read is a microtask away), then whenever the
 * reader asks for more, until the body has come whole, was cut or cancelled, or `over()` (the
 * exchange ended, read or not).
 */
function fromClient(source: ReadableStream<Uint8Array>, activity: Activity): { body: ReadableStream<Uint8Array>; over: () => void } {
  const reader = source.getReader();
  let ended = false;
  let release: Release | undefined;
  const rest = () => {
    release?.();
    release = undefined;
  };
  const body = new ReadableStream<Uint8Array>({
    start() {
      release = activity.working();
    },
    async pull(controller) {
      if (!ended) release ??= activity.working();
      try {
        const next = await reader.read();
        if (next.done) {
          ended = true;
          controller.close();
        } else controller.enqueue(next.value);
      } catch (e) {
        ended = true;
        controller.error(e);
      } finally {
        rest();
      }
    },
    cancel(reason) {
      ended = true;
      rest();
      return reader.cancel(reason).catch(() => {});
    },
  });
  return {
    body,
    over: () => {
      ended = true;
      rest();
    },
  };
}

/**
 * The worker-crash of a rule with `atMs`: the worker dies `atMs` of virtual time after the request
 * reached it, cutting the exchange (`upstream` aborts); `end()`, called as the answer ends, says
 * whether the worker is felled now instead (its answer ended first) or was already.
 */
function crashTimer(clock: Core["clock"], atMs: number, upstream: AbortController, workerId: string, ruleId: string) {
  const state = { crashed: false, at: `${atMs} ms into the request`, end: () => false };
  let pending = true;
  const timer = clock.after(atMs, () => {
    state.crashed = true;
    upstream.abort(new Error(`worker ${workerId} crashed ${state.at} (fault rule ${ruleId})`));
  }, "load-balancer worker-crash");
  state.end = () => {
    if (!pending) return false;
    pending = false;
    clock.cancel(timer);
    return true;
  };
  return state;
}

function tooLarge(bytes: number | undefined): Response {
  const size = bytes === undefined ? "more than 30 MB" : `${(bytes / MB).toFixed(1)} MB`;
  const answer = refusal(413, `payload too large: the request body is ${size}; a load-balancing endpoint takes at most 30 MB`);
  // The connection ends after it, once the client has read it (http/linger.ts): the rest of the body is not read.
  answer.headers.set("connection", "close");
  return answer;
}

/** The whole body, or undefined once it passes `limit` bytes. */
async function readUpTo(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | undefined> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of body as unknown as AsyncIterable<Uint8Array>) {
    size += part.byteLength;
    if (size > limit) return undefined;
    parts.push(part);
  }
  return Buffer.concat(parts);
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

const causeOf = (e: unknown): string => (e as { code?: string }).code ?? (e as Error).message;

function notLoadBalancer(endpointId: string, known: string[]): EmulatorError {
  const listed = known.length ? `the load-balancing endpoints are ${known.map((k) => `"${k}"`).join(", ")}` : "no load-balancing endpoint exists";
  return new EmulatorError(
    "ENDPOINT_NOT_FOUND",
    `load-balancing endpoint "${endpointId}" not found; ${listed} (give an endpoint "type": "LOAD_BALANCER" in the config, or create one with POST /v2/serverless)`,
  );
}
