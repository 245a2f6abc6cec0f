import type { Server } from "node:http";
import type { Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import type { Logger } from "../domain/logger.js";
import { lbHostPattern } from "../http/load-balancer/host-route.js";
import { defaultTlsDir, tlsIdentity, type TlsIdentity } from "./tls.js";

/** The first byte of a TLS record carrying a handshake: a ClientHello opens every TLS connection. */
const TLS_HANDSHAKE = 0x16;
/** How long a TLS handshake may take: a client that opens one and stalls is cut then. */
const HANDSHAKE_MS = 10_000;

/**
 * Makes minipod's HTTP server answer TLS on the same port: each new connection's first byte says
 * which it is (0x16, a TLS handshake; an HTTP request starts with a method's letter). A plain one
 * is handed to the HTTP server at once, its byte put back; a TLS one to a TLS server of the same
 * identity, and, once its handshake is done, its decrypted stream to the same HTTP server, so both
 * take the one request pipeline. The peek costs a connection one read handed over, not a request:
 * keep-alive requests after the first never meet it.
 *
 * A handshake that fails (no shared cipher, a plain byte stream after 0x16, a client that stalls)
 * ends that connection with TLS's own alert, logged at debug; nothing else sees it.
 *
 * Returns what `close()` needs: the connections still being sorted (no byte yet, or in their
 * handshake), which the HTTP server does not know of and so cannot close itself.
 */
export function acceptTls(server: Server, identity: TlsIdentity, log: Logger): { destroyPending(): void } {
  // The HTTP server's own connection listener: it is given each connection once sorted.
  const listeners = server.listeners("connection") as Array<(socket: Socket) => void>;
  if (listeners.length !== 1) throw new Error(`expected the HTTP server's one connection listener, found ${listeners.length}`);
  const serveHttp = listeners[0]!;
  server.removeListener("connection", serveHttp);
  const pending = new Set<Socket>();
  const tls = createTlsServer({
    // The server's own context is made from key and cert (it takes no secureContext); SNI picks others.
    key: identity.key,
    cert: identity.cert,
    SNICallback: (name, done) => done(null, identity.contextFor(name) ?? identity.context),
    ALPNProtocols: ["http/1.1"],
    handshakeTimeout: HANDSHAKE_MS,
  });
  tls.on("secureConnection", (socket: TLSSocket) => {
    // The HTTP server knows this one now (and closes it with itself): no longer pending.
    const raw = (socket as { _parent?: Socket })._parent;
    if (raw) pending.delete(raw);
    serveHttp.call(server, socket);
  });
  tls.on("tlsClientError", (err, socket) => {
    if (log.enabled("debug")) log.debug(`a TLS handshake failed: ${(err as NodeJS.ErrnoException).code ?? ""} ${err.message}`);
    socket.destroy();
  });
  server.on("connection", (socket: Socket) => {
    // A connection handed back to the server (a declined upgrade, TLS or not) is sorted already.
    if ((socket as TLSSocket).encrypted || socket.readableLength > 0) return void serveHttp.call(server, socket);
    pending.add(socket);
    const forget = () => pending.delete(socket);
    socket.once("close", forget);
    // Until a byte comes, the HTTP server's own timers do not run: a silent connection is cut at its headers' timeout.
    socket.setTimeout(server.headersTimeout || 60_000, () => socket.destroy());
    socket.on("error", ignore);
    socket.once("data", (chunk: Buffer) => {
      socket.pause();
      socket.unshift(chunk);
      socket.setTimeout(0);
      socket.off("error", ignore);
      if (chunk[0] === TLS_HANDSHAKE) {
        // Pending until its handshake ends (secureConnection) or fails (the TLS socket closes the raw one).
        tls.emit("connection", socket);
        return;
      }
      forget();
      socket.off("close", forget);
      serveHttp.call(server, socket);
      socket.resume();
    });
  });
  return {
    destroyPending() {
      for (const socket of pending) socket.destroy();
      pending.clear();
    },
  };
}

function ignore(): void {}

/**
 * TLS on minipod's port (acceptTls below), unless turned off: the authority from its folder, a leaf for
 * the names minipod answers. A folder that cannot be written leaves the port plain, with a warning.
 */
export function serveTls(server: Server, option: boolean | { dir?: string } | undefined, host: string, allowed: readonly string[] | "all", log: Logger) {
  if (option === false) return undefined;
  const dir = (typeof option === "object" && option.dir) || defaultTlsDir();
  const named = allowed === "all" ? [] : allowed.map((h) => h.replace(/^\./, ""));
  // Each load-balancing endpoint's own name (`{endpoint_id}.localhost`...) gets a leaf as a client first asks for it.
  const byHost = lbHostPattern(host, allowed);
  try {
    const identity = tlsIdentity(dir, ["localhost", "127.0.0.1", "::1", host, ...named], (name) => byHost.test(name));
    return { caFile: identity.caFile, ...acceptTls(server, identity, log) };
  } catch (e) {
    log.warn(`TLS is off: ${(e as Error).message} (set MINIPOD_TLS_DIR to a folder minipod may write, or turn TLS off with --tls off)`);
    return undefined;
  }
}
