import { getRequestListener, RequestError } from "@hono/node-server";
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Activity } from "../domain/activity.js";
import { EmulatorError } from "../domain/errors.js";
import type { Logger } from "../domain/logger.js";
import type { App } from "./app.js";
import type { Core } from "./core.js";
import { crossOriginGuard } from "./cross-origin.js";
import { HostCheck, hostGuard } from "./host-check.js";
import { endpointOfHost, lbHostPattern, routeLoadBalancing } from "./load-balancer/host-route.js";
import { loadBalancerUpgrade } from "./load-balancer/upgrade.js";
import { endGracefully, isEnding, lingerIfUnread } from "./linger.js";
import { problemAnswer } from "./problem.js";

export interface PipelineOptions {
  /** The address minipod listens on. */
  host: string;
  /** `allowedHosts`, the option's merged with the config's. */
  allowed: readonly string[] | "all";
  log: Logger;
  /** Serves an upgrade declined after it was held (a restore) as the plain request it also is (`servePlain`). */
  declined(req: IncomingMessage, socket: Duplex, head: Buffer): void;
}

/** What minipod's socket hands its requests and upgrades to. */
export interface Pipeline {
  request(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Takes a WebSocket upgrade to a load-balancing endpoint and returns true; returns false, having
   * touched nothing, for any other (h2c, a WebSocket elsewhere): the caller serves that request as
   * plain HTTP/1.1 (`withoutUpgrade`).
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Node could not read a request as HTTP/1.1 (the server's `clientError`): answers it with a problem, then closes. */
  clientError(err: Error & { code?: string }, socket: Duplex): void;
  /** A CONNECT (a proxy's tunnel): refused with a problem, then closed. */
  connect(req: IncomingMessage, socket: Duplex): void;
}

/** Writes a problem on a socket node has handed over (no response object), then closes it. */
function answerOnSocket(socket: Duplex, err: unknown): number {
  const { status, headers, body } = problemAnswer(err);
  const lines = Object.entries({ ...headers, "content-length": String(Buffer.byteLength(body)), connection: "close" }).map(([k, v]) => `${k}: ${v}`);
  socket.on("error", () => {});
  socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\n${lines.join("\r\n")}\r\n\r\n${body}`);
  // What the client still sends is read and dropped for a while: closed at once, its reset could lose the answer.
  if (socket instanceof Socket) endGracefully(socket);
  else socket.end(() => socket.destroy());
  return status;
}

/** Sockets given back to the server after a declined upgrade: they keep one error listener of ours. */
const servedPlain = new WeakSet<Duplex>();

/**
 * Serves an upgrade request minipod declined as a plain request on its connection: the server
 * parses `withoutUpgrade`'s bytes as any request (`server.emit("connection", socket)`, which
 * node documents for sockets it did not accept itself), once the answers to requests sent before
 * it on the connection have gone (a new parser's answers would otherwise queue behind them).
 */
export function servePlain(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  socket.unshift(withoutUpgrade(req, head));
  if (!servedPlain.has(socket)) {
    servedPlain.add(socket);
    socket.on("error", () => {});
  }
  // What node's server left on the socket when it handed it over; the new connection adds its own.
  for (const event of ["resume", "pause"] as const)
    for (const listener of socket.listeners(event)) if ((listener as { name?: string }).name === `onSocket${event === "resume" ? "Resume" : "Pause"}`) socket.off(event, listener as () => void);
  let turns = 0;
  const again = () => {
    if (socket.destroyed) return;
    // The answer the connection is writing (node detaches it as it finishes, and attaches the next).
    const before = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (!before) return void server.emit("connection", socket);
    if (!before.destroyed) {
      let once = false;
      const next = () => void (once || ((once = true), setImmediate(again)));
      return void before.once("finish", next).once("close", next);
    }
    // Destroyed, and about to be detached: a few turns at most.
    if (++turns > 100) return void socket.destroy();
    setImmediate(again);
  };
  again();
}

/** Why node could not read a request, by its parser's code: the status and what to say. */
function unparsable(code: string | undefined, reason: string | undefined): EmulatorError {
  if (code === "HPE_HEADER_OVERFLOW")
    return new EmulatorError("BAD_REQUEST", "the request's head (its request line and headers) is over 16 KiB: send less in headers", { status: 431 });
  if (code === "ERR_HTTP_REQUEST_TIMEOUT" || code === "ERR_HTTP_HEADERS_TIMEOUT")
    return new EmulatorError("BAD_REQUEST", "the request did not arrive whole in time: send its head and body without pausing", { status: 408 });
  if (code === "HPE_CHUNK_EXTENSIONS_OVERFLOW") return new EmulatorError("PAYLOAD_TOO_LARGE", "the chunked body's chunk extensions are too long");
  return new EmulatorError(
    "BAD_REQUEST",
    `the request is not valid HTTP/1.1 (${code ?? "unreadable"}${reason ? `: ${reason}` : ""}): check its request line (METHOD /path HTTP/1.1, the path percent-encoded) and headers`,
  );
}

/**
 * What @hono/node-server could not turn into a web Request (a request target that is no path,
 * `*` or an authority; a backslash in the path; a Host it cannot read): a problem naming it.
 */
function unreadableRequest(e: unknown): Response {
  const message = (e as Error)?.message ?? String(e);
  const err =
    e instanceof RequestError
      ? new EmulatorError(
          "BAD_REQUEST",
          message === "Invalid URL"
            ? "the request target is not a path: minipod's routes are paths starting with / (an absolute http:// URL is read as its path); OPTIONS * and other targets name none"
            : message === "Backslash in request path"
              ? "the request path has a backslash: percent-encode it as %5C"
              : `the request cannot be read: ${message}`,
        )
      : e;
  const { status, headers, body } = problemAnswer(err);
  return new Response(body, { status, headers });
}

/**
 * A request's body still on its way while minipod reads it is real work (see Activity): the auto
 * clock does not skip meanwhile, whichever route reads it (a fast entry, a Hono route's JSON body,
 * GraphQL, an upload, a relay to a worker). Marked from the first read of a body not yet whole
 * (node's `resume`, as a reader starts taking its bytes) until it has come whole (`end`) or the
 * exchange is over (the answer ended, the connection closed). A body nobody reads marks nothing.
 * A client that stalls mid-body holds it at most until node's `requestTimeout` (5 minutes) cuts
 * the request with a 408, as it cuts any request that does not arrive whole.
 */
function markBodyArriving(req: IncomingMessage, res: ServerResponse, activity: Activity): void {
  if (req.complete || (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined)) return;
  req.once("resume", () => {
    if (req.complete || req.readableEnded) return;
    const release = activity.working();
    req.once("end", release);
    res.once("close", release);
  });
}

/** `Upgrade: websocket`, alone or among other protocols: the one protocol minipod switches to. */
const WEBSOCKET = /(?:^|,)\s*websocket\s*(?:,|$)/i;
/** The headers of an upgrade minipod declines, left out of the request it serves instead. */
const UPGRADE_HEADERS = new Set(["upgrade", "http2-settings"]);

/**
 * An upgrade request minipod does not take, as the plain HTTP/1.1 request it then is (RFC 9110
 * §7.8: a server may ignore `Upgrade`): its request line and headers as they came, without
 * `Upgrade`, `HTTP2-Settings` and those tokens of `Connection`, followed by the bytes read after
 * its head (its body, a next request). Node hands such a request over as an upgrade, socket and
 * all, so the server parses these bytes again as any request of the connection
 * (`server.emit("connection", socket)` after `socket.unshift`), body, keep-alive and all.
 */
export function withoutUpgrade(req: IncomingMessage, head: Buffer): Buffer {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (UPGRADE_HEADERS.has(lower)) continue;
    let value = req.rawHeaders[i + 1]!;
    if (lower === "connection") {
      value = value
        .split(",")
        .map((t) => t.trim())
        .filter((t) => t !== "" && !UPGRADE_HEADERS.has(t.toLowerCase()))
        .join(", ");
      if (value === "") continue;
    }
    lines.push(`${name}: ${value}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), head]);
}

/**
 * The one request pipeline of minipod's socket, in order:
 *
 * 1. the Host allow-list (host-check.ts): a foreign Host is refused before anything reads it;
 * 2. writes from browser pages of other origins (cross-origin.ts);
 * 3. a load-balancing endpoint reached by host name takes the path form (`/lb/{endpoint_id}/...`);
 * 4. the route table (route-table.ts): a route with a fast entry answers from node's request,
 *    any other through Hono (@hono/node-server); either way behind the one gate (gate.ts: the
 *    log line, the journal, faults, authentication, limits), then the route; its body, while it
 *    arrives as the route reads it, is real work for the clock (`markBodyArriving`).
 *
 * An upgrade is taken only as a WebSocket to a load-balancing endpoint (load-balancer/upgrade.ts);
 * any other (Java's `HttpClient` asks every HTTP/1.1 request to become h2c) is served as the
 * plain request it also is (`withoutUpgrade`).
 *
 * This is the only place node's requests are dispatched (test/architecture.test.ts).
 */
export function requestPipeline(app: App, core: Pick<Core, "endpoints" | "snapshots" | "clock"> & Parameters<typeof loadBalancerUpgrade>[0], options: PipelineOptions): Pipeline {
  // `{endpoint_id}.localhost` names a load-balancing endpoint: its requests take the path form.
  const byHost = lbHostPattern(options.host, options.allowed);
  const hosts = { bound: options.host, allowed: options.allowed, dynamic: (name: string) => endpointOfHost(name, core.endpoints, byHost) !== undefined };
  const refused = hostGuard(hosts, options.log);
  const foreign = crossOriginGuard(options.log);
  const hono = getRequestListener(app.fetch, { hostname: options.host, errorHandler: unreadableRequest });
  // WebSocket upgrades to load-balancing endpoints go to the worker's server.
  const upgradeHosts = new HostCheck(hosts);
  const upgrade = loadBalancerUpgrade(core);
  const pipeline: Pipeline = {
    request(req, res) {
      // An answer that ends the connection before the body is read lets the client read it first.
      lingerIfUnread(req, res);
      // While a snapshot is restored, every request waits for it to end before any step reads the
      // state (the Host check and the host route read the endpoints): it sees the old state or the new.
      const held = core.snapshots.held();
      if (held) return void held.then(() => pipeline.request(req, res));
      if (refused(req, res) || foreign(req, res)) return;
      markBodyArriving(req, res, core.clock.activity);
      routeLoadBalancing(req, core.endpoints, byHost);
      if (!app.table.take(req, res)) void hono(req, res);
    },
    upgrade(req, socket, head) {
      // Only a WebSocket to a load-balancing endpoint is taken; anything else is a plain request.
      if (!WEBSOCKET.test(String(req.headers.upgrade ?? ""))) return false;
      // Held while a snapshot is restored (the socket reads nothing meanwhile), then taken or
      // declined on the state restored.
      const held = core.snapshots.held();
      if (held) {
        void held.then(() => {
          if (!socket.destroyed && !pipeline.upgrade(req, socket, head)) options.declined(req, socket, head);
        });
        return true;
      }
      const target = req.url;
      routeLoadBalancing(req, core.endpoints, byHost);
      if (upgradeHosts.allows(req.headers.host) && upgrade(req, socket, head)) return true;
      req.url = target;
      return false;
    },
    clientError(err, socket) {
      // What still comes on a connection that ends gracefully (the body after a 431) is dropped with it.
      if (isEnding(socket) && err.code !== "ECONNRESET") return;
      // A reset, or a connection whose answer to an earlier request is being written: only closed.
      const busy = (socket as { bytesWritten?: number }).bytesWritten !== 0 && (socket as { _httpMessage?: unknown })._httpMessage;
      if (err.code === "ECONNRESET" || !socket.writable || busy) return void socket.destroy();
      const status = answerOnSocket(socket, unparsable(err.code, (err as { reason?: string }).reason));
      if (options.log.enabled("debug")) options.log.debug(`a request node could not read was answered ${status}: ${err.message}`);
    },
    connect(req, socket) {
      answerOnSocket(socket, new EmulatorError("METHOD_NOT_ALLOWED", `CONNECT ${req.url} asks for a tunnel: minipod is no proxy; send the request itself (GET, POST...) to minipod's address`));
    },
  };
  return pipeline;
}
