import { Agent, request, type ClientRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import type { Socket } from "node:net";
import { Readable } from "node:stream";

/**
 * Headers of one connection, not of the request: never passed on (RFC 9110 §7.6.1). `Expect:
 * 100-continue` with them: minipod's server has answered it already, and the worker gets the body.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
]);

/**
 * A pool of connections to workers that never lends one that has sent bytes nobody asked for: a
 * worker that writes after its answer has ended (a second answer, a stray byte) would have them
 * read as the answer to the next request sent on that connection. While a connection waits in
 * the pool it is read, and anything it sends closes it; one with bytes already waiting is not
 * kept at all.
 */
export class WorkerAgent extends Agent {
  private readonly watching = new WeakMap<Socket, () => void>();

  // Node's agent destroys a socket for which this returns false (its types say void).
  override keepSocketAlive(socket: Socket): void {
    if (socket.readableLength > 0) return false as never;
    const stray = () => socket.destroy();
    this.watching.set(socket, stray);
    // Read while idle (the last answer may have left it paused), so that nothing waits for the next request.
    socket.on("data", stray).resume();
    return super.keepSocketAlive(socket) as never;
  }

  override reuseSocket(socket: Socket, req: ClientRequest): void {
    const stray = this.watching.get(socket);
    if (stray) socket.off("data", stray);
    this.watching.delete(socket);
    super.reuseSocket(socket, req);
  }
}

/** Connections to workers kept open between requests, as the service's load balancer keeps them. */
export const workerAgent = (): WorkerAgent => new WorkerAgent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 1000, noDelay: true } as ConstructorParameters<typeof Agent>[0]);

/** The request's headers as a worker gets them: hop-by-hop ones dropped, the Host its own. */
export function forwardedHeaders(headers: Headers, host: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  headers.forEach((value, name) => {
    if (HOP_BY_HOP.has(name) || name === "host") return;
    out[name] = value;
  });
  out.host = host;
  return out;
}

/** A worker's answer headers as the client gets them (hop-by-hop ones dropped). */
function answerHeaders(raw: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, value);
  }
  return out;
}

/**
 * A worker's answer whose status no client can be given (outside 200–599: 600 and above, under
 * 100, or a 101 to a request that asked for no upgrade): the load balancer answers 502 in its
 * place, naming it.
 */
export class WorkerStatusError extends Error {
  constructor(readonly status: number) {
    super(`the worker answered status ${status}, not a final HTTP status (200 to 599)`);
  }
}

/** A worker's answer that node refuses to write to the client (a control character in its status text). */
export class UnpassableAnswer extends Error {}

/** Whether a worker's final status can be passed on (1xx are the connection's: never final). */
export const passable = (status: number): boolean => status >= 200 && status <= 599;

/** Statuses whose answers have no body (RFC 9110 §6.4.1). */
const NO_BODY = new Set([204, 205, 304]);

/**
 * Sends a request to a worker's HTTP server and resolves with its answer as it starts, the body a
 * stream that flows as the worker writes it (SSE, chunked), bytes unchanged. Rejects when the
 * worker answers nothing (refused, reset before an answer); `signal` aborts the exchange either way
 * (the client went away, the time limit). `agent`: the emulator's connections to its workers.
 */
export function forward(
  agent: Agent,
  base: URL,
  method: string,
  pathAndQuery: string,
  headers: Headers,
  body: ReadableStream<Uint8Array> | Uint8Array | null,
  signal: AbortSignal,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const out = request(
      { host: base.hostname, port: base.port, method, path: pathAndQuery, headers: forwardedHeaders(headers, base.host), agent, signal },
      (res) => {
        const status = res.statusCode ?? 502;
        if (!passable(status)) {
          // Nothing of it is read: the connection carries it away.
          res.destroy();
          return reject(new WorkerStatusError(status));
        }
        const noBody = method === "HEAD" || NO_BODY.has(status);
        if (noBody) res.resume();
        resolve(new Response(noBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage, headers: answerHeaders(res.headers) }));
      },
    );
    out.on("error", reject);
    // A 101 to a request that asked for no upgrade: node's client hands over the socket, and
    // would otherwise neither answer nor fail.
    out.on("upgrade", (res: import("node:http").IncomingMessage, socket: import("node:stream").Duplex) => {
      socket.destroy();
      reject(new WorkerStatusError(res.statusCode ?? 101));
    });
    // Whatever else ends the exchange before an answer fails it (settled already, this does nothing).
    out.on("close", () => reject(new Error("the connection closed before an answer")));
    if (body === null) out.end();
    else if (body instanceof Uint8Array) out.end(body);
    else Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>).on("error", (e) => out.destroy(e)).pipe(out);
  });
}
