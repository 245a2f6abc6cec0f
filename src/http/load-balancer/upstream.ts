import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { Agent, type Dispatcher } from "undici";
import { HOP_BY_HOP, passable, UnpassableAnswer, WorkerStatusError } from "./proxy.js";

/**
 * Connections to workers for the relay from node's request (`LoadBalancerRelay`), kept open between
 * requests as the service's load balancer keeps them. undici's dispatcher rather than node's
 * `http.request`: node's client builds a `ClientRequest`, an `IncomingMessage` and two pipes per
 * request, which cost minipod more CPU than the rest of the relay together. No timeouts of its own:
 * the 5.5-minute limit is the virtual clock's (`Lease.onTimeout`), and a stream may be silent for long.
 */
export const relayAgent = (): Agent => new Agent({ connections: 256, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });

/** Where a worker's server is: its origin and the Host header it gets. */
export interface UpstreamTarget {
  origin: string;
  host: string;
}

const targets = new Map<string, UpstreamTarget>();

/** A worker URL's origin and host, parsed once per URL (there are few: one per worker). */
export function upstreamTarget(url: string): UpstreamTarget {
  let t = targets.get(url);
  if (!t) {
    const parsed = new URL(url);
    t = { origin: parsed.origin, host: parsed.host };
    // Worker processes come and go on new ports; keep the table small.
    if (targets.size >= 1024) targets.clear();
    targets.set(url, t);
  }
  return t;
}

/** The request's headers as a worker gets them: hop-by-hop ones dropped, the Host its own. */
export function relayedHeaders(headers: IncomingHttpHeaders, host: string): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || name === "host") continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  out.host = host;
  return out;
}

/** What happens to one exchange with a worker, as it happens. */
export interface UpstreamEvents {
  /** The worker's status and headers (hop-by-hop ones dropped), as `[name, value, ...]`; throws when they cannot be passed on. */
  head(status: number, statusText: string, headers: string[]): void;
  /** A part of the body; false asks the worker to wait until `resume` is called. */
  data(chunk: Buffer, resume: () => void): boolean;
  /** The answer ended. */
  end(): void;
  /** The exchange failed, before or after `head`. */
  error(e: Error): void;
}

/**
 * Sends a request to a worker's server and reports its answer as it comes, bytes unchanged.
 * Returns the function that aborts the exchange (the client went away, the time limit). `pool`:
 * the emulator's connections to its workers.
 */
export function sendUpstream(
  pool: Dispatcher,
  target: UpstreamTarget,
  req: IncomingMessage,
  path: string,
  body: IncomingMessage | null,
  events: UpstreamEvents,
): (reason: Error) => void {
  let abort: ((e: Error) => void) | undefined;
  let aborted: Error | undefined;
  let resume: () => void = () => {};
  let done = false;
  const handler: Dispatcher.DispatchHandlers = {
    onConnect(fn) {
      if (aborted) fn(aborted);
      else abort = fn;
    },
    onHeaders(status, raw, resumeFn, statusText) {
      // 1xx answers are the worker's and this connection's business, not the client's.
      if (status >= 100 && status < 200) return true;
      if (!passable(status)) {
        // Refused before anything reaches the client: `error` answers 502 (and the connection goes).
        const e = new WorkerStatusError(status);
        aborted = e;
        abort?.(e);
        return false;
      }
      resume = resumeFn;
      const headers: string[] = [];
      for (let i = 0; i < raw.length; i += 2) {
        const name = raw[i]!.toString("latin1");
        if (HOP_BY_HOP.has(name.toLowerCase())) continue;
        headers.push(name, raw[i + 1]!.toString("latin1"));
      }
      try {
        events.head(status, statusText, headers);
      } catch (e) {
        const refused = new UnpassableAnswer((e as Error).message);
        aborted = refused;
        abort?.(refused);
        return false;
      }
      return true;
    },
    onData(chunk) {
      return events.data(chunk, resume);
    },
    onComplete() {
      done = true;
      events.end();
    },
    onError(e) {
      if (done) return;
      done = true;
      events.error(e);
    },
  };
  pool.dispatch({ origin: target.origin, path, method: req.method as Dispatcher.HttpMethod, headers: relayedHeaders(req.headers, target.host), body }, handler);
  return (reason) => {
    if (done) return;
    aborted = reason;
    abort?.(reason);
  };
}
