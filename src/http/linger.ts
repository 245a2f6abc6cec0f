import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Bytes of an unread body read and dropped after an answer that ends the connection, at most. */
export const LINGER_BYTES = 32 * 1024 * 1024;

/** Wall ms a connection is kept open after such an answer, at most, for its client to read it. */
export const LINGER_MS = 2_000;

const CURRENT = Symbol("the request being answered on this connection");
type Lingering = Socket & { [CURRENT]?: IncomingMessage };

/**
 * Ends a connection whose client may still be sending a body minipod refused (a 413 while an
 * upload goes on): the answer, then a half-close, then what still comes is read and dropped, up to
 * `LINGER_BYTES` or `LINGER_MS` of the wall, and only then is the socket closed. Closed at once
 * with bytes unread, the kernel resets the connection, and a client still writing its body
 * (node's fetch, Python's requests and urllib) often loses the answer it had not yet read.
 */
export function endGracefully(socket: Socket, limits: { bytes?: number; ms?: number } = {}): void {
  ending.add(socket);
  const bytes = limits.bytes ?? LINGER_BYTES;
  const from = socket.bytesRead;
  const close = () => {
    clearTimeout(timer);
    clearInterval(watch);
    socket.destroy();
  };
  const timer = setTimeout(close, limits.ms ?? LINGER_MS);
  // Node's HTTP parser may read the socket itself (then no 'data' event): its count is watched.
  const watch = setInterval(() => {
    if (socket.bytesRead - from > bytes) close();
  }, 20);
  timer.unref();
  watch.unref();
  socket.once("end", close);
  socket.once("close", () => {
    clearTimeout(timer);
    clearInterval(watch);
  });
  socket.on("error", () => {});
  // What comes is dropped (a socket nobody reads would stop taking it).
  if (socket.listenerCount("data") === 0) socket.on("data", () => {});
  if (!socket.writableEnded) socket.end();
}

const ending = new WeakSet<object>();

/** Whether `socket` is ending gracefully (what else it brings, a parse error included, is dropped). */
export const isEnding = (socket: object): boolean => ending.has(socket);

/** Node's own: end, then destroy once the answer is written. */
function nodeDestroySoon(this: Socket): void {
  (Object.getPrototypeOf(this) as { destroySoon(this: Socket): void }).destroySoon.call(this);
}

/**
 * Notes that `req` is the request being answered on its connection; when node's server ends the
 * connection after the answer (`Connection: close`) while the body of `req` is not read whole,
 * it ends gracefully (`endGracefully`) rather than at once. Costs a request two property writes.
 */
export function lingerIfUnread(req: IncomingMessage, res?: ServerResponse): void {
  const socket = req.socket as Lingering | null;
  if (!socket) return;
  socket[CURRENT] = req;
  if (socket.destroySoon !== lingeringDestroySoon) socket.destroySoon = lingeringDestroySoon;
  if (res && unbounded(req)) closeIfAnsweredUnread(req, res);
}

/** A body node would read whole after an early answer on a kept connection: of unknown length, or past `LINGER_BYTES`. */
function unbounded(req: IncomingMessage): boolean {
  const { headers } = req;
  if (headers["transfer-encoding"] !== undefined) return true;
  const length = headers["content-length"];
  return length !== undefined && Number(length) > LINGER_BYTES;
}

/**
 * An answer begun (any status: a 401, a 404 before the body is read) while nothing has read the
 * body of `req`, which is of unknown length or past `LINGER_BYTES`, ends the connection
 * (`Connection: close`): node would otherwise read and drop the whole body to keep the connection,
 * however large. The connection then lingers (`lingeringDestroySoon`), reading at most
 * `LINGER_BYTES` of it.
 */
function closeIfAnsweredUnread(req: IncomingMessage, res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
    if (!req.complete && !req.readableDidRead && req.readableFlowing === null) this.shouldKeepAlive = false;
    return writeHead.apply(this, args);
  } as ServerResponse["writeHead"];
}

function lingeringDestroySoon(this: Lingering): void {
  const req = this[CURRENT];
  this[CURRENT] = undefined;
  if (!req || req.complete || this.destroyed) return nodeDestroySoon.call(this);
  endGracefully(this);
}
