import type { IncomingMessage } from "node:http";
import { tryDecodeURIComponent } from "hono/utils/url";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { VirtualClock } from "../../domain/clock.js";
import { EmulatorError } from "../../domain/errors.js";
import { LB_PATH_PREFIX, LbRefusal, parseAffinity, type Lease } from "../../domain/load-balancer/types.js";
import { LB_REQUEST_TIMEOUT_MS } from "../../domain/limits.js";
import type { HeaderSink } from "../auth.js";
import type { Core } from "../core.js";
import { serviceAdmission } from "../gate.js";
import { problemAnswer } from "../problem.js";
import { HOP_BY_HOP } from "./proxy.js";
import { TIMED_OUT, WORKER_ID_HEADER } from "./serve.js";

/** The most of a worker's answer to an upgrade read before its head ends. */
const WORKER_HEAD_MAX_BYTES = 64 * 1024;

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  429: "Too Many Requests",
  501: "Not Implemented",
  502: "Bad Gateway",
  524: "A Timeout Occurred",
};

/** Writes a plain HTTP answer on a socket that asked to upgrade, and closes it. */
function answer(socket: Duplex, status: number, body: string, headers: Record<string, string> = {}): void {
  const lines = [
    `HTTP/1.1 ${status} ${REASONS[status] ?? "Error"}`,
  ];
  for (const [k, v] of Object.entries({ "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), connection: "close", ...headers })) lines.push(`${k}: ${v}`);
  // Closed once written: a client that keeps its end open does not keep the server from closing.
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
}

/**
 * WebSocket upgrades to a load-balancing endpoint (`/lb/{endpoint_id}/...`, or by host): after
 * the gate's admission, as for its other requests (authentication, scope, the endpoint's limits),
 * a worker is chosen as for any request (affinity included) and the connection is joined to the
 * worker's server as it is, bytes both ways, until either side closes; the worker's slot, and one
 * of the endpoint's requests at once (its rate limit), are held meanwhile. The 5.5-minute limit of
 * a load-balanced request holds on the virtual clock: a worker that has not answered the upgrade
 * within it gets the client a 524, and once joined, a connection silent both ways for that long
 * is closed. Workers in minipod's process (a function, the built-ins) take no upgrades: 501.
 * Returns false for a path that is no endpoint's.
 */
export function loadBalancerUpgrade(
  core: Pick<Core, "loadBalancers" | "endpoints" | "paths" | "clock"> & Parameters<typeof serviceAdmission>[0],
): (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean {
  const lb = core.loadBalancers;
  const admit = serviceAdmission(core);
  return (req, socket, head) => {
    const url = req.url ?? "/";
    if (!url.startsWith(`${LB_PATH_PREFIX}/`)) return false;
    const end = url.slice(LB_PATH_PREFIX.length + 1).search(/[/?]/);
    const rawId = end === -1 ? url.slice(LB_PATH_PREFIX.length + 1) : url.slice(LB_PATH_PREFIX.length + 1, LB_PATH_PREFIX.length + 1 + end);
    const rest = url.slice(LB_PATH_PREFIX.length + 1 + rawId.length) || "/";
    // The id decoded as the app's router decodes it (`/lb/%61pi/ws` is api's), and the path the gate sees so.
    const endpointId = tryDecodeURIComponent(rawId);
    const path = `${LB_PATH_PREFIX}/${endpointId}${rest.split("?")[0]}`;
    socket.on("error", () => {});
    const sink: HeaderSink & { headers: Record<string, string> } = { headers: {}, header: (k, v) => void (sink.headers[k] = v) };
    let admitted: (() => void) | undefined;
    try {
      // The gate's admission (an unknown endpoint is counted nowhere, then refused).
      admitted = admit("GET", path, req.headers.authorization, core.paths.classify("GET", path), sink);
      if (!core.endpoints.has(endpointId, "LOAD_BALANCER")) throw new EmulatorError("ENDPOINT_NOT_FOUND", `load-balancing endpoint "${endpointId}" not found`);
    } catch (e) {
      const p = problemAnswer(e);
      answer(socket, p.status, p.body, { ...sink.headers, ...p.headers });
      return true;
    }
    const handler = lb.handlerOf(endpointId)!;
    if (handler.kind !== "process" && handler.kind !== "url") {
      admitted?.();
      answer(socket, 501, JSON.stringify({ error: "WebSocket upgrades reach worker processes and servers given by URL; this endpoint's handler runs in minipod's process" }));
      return true;
    }
    void lb
      .acquire(endpointId, parseAffinity(req.headers[WORKER_ID_HEADER] as string | undefined))
      .then(
        (lease) => join(req, socket, head, rest, lease, admitted, core.clock),
        (e: unknown) => {
          admitted?.();
          answer(socket, e instanceof LbRefusal ? e.status : 500, JSON.stringify({ error: (e as Error).message }));
        },
      )
      .catch(() => socket.destroy());
    return true;
  };
}

/**
 * Joins the client's connection to the worker's: the upgrade request as it came, then bytes both
 * ways. The worker answers the upgrade within `LB_REQUEST_TIMEOUT_MS` of virtual time (524
 * otherwise); then each silence of both sides is at most as long (the connection is closed).
 */
function join(req: IncomingMessage, client: Duplex, head: Buffer, path: string, lease: Lease, admitted: (() => void) | undefined, clock: VirtualClock): void {
  const target = new URL(lease.worker.target!.url);
  const upstream: Socket = connect({ host: target.hostname, port: Number(target.port) });
  let released = false;
  let joined = false;
  // When a byte last passed (the lease's time until the worker's answer has passed on).
  let last = clock.now();
  const touch = () => void (last = clock.now());
  const watch = () => {
    const due = last + LB_REQUEST_TIMEOUT_MS;
    if (clock.now() < due) return void (timer = clock.after(due - clock.now(), watch, "load-balancer WebSocket idle"));
    if (!joined) answer(client, 524, JSON.stringify({ error: TIMED_OUT }), { [WORKER_ID_HEADER]: lease.worker.id });
    release();
  };
  let timer = clock.after(LB_REQUEST_TIMEOUT_MS, watch, "load-balancer WebSocket idle");
  const release = () => {
    if (released) return;
    released = true;
    clock.cancel(timer);
    lease.release();
    admitted?.();
    if (!client.writableEnded) client.destroy();
    if (!upstream.writableEnded) upstream.destroy();
  };
  upstream.on("connect", () => {
    const lines = [`${req.method} ${path} HTTP/1.1`, `host: ${target.host}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      const lower = name.toLowerCase();
      // The upgrade's own headers go through; other connection headers and the Host do not.
      if (lower === "host" || (HOP_BY_HOP.has(lower) && lower !== "upgrade" && lower !== "connection")) continue;
      lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
    }
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length) upstream.write(head);
    // The worker's answer (101 and its headers) goes to the client with the worker named, then the frames as they are.
    let headBytes = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      headBytes = Buffer.concat([headBytes, chunk]);
      const at = headBytes.indexOf("\r\n");
      if (at === -1 || headBytes.indexOf("\r\n\r\n") === -1) {
        // A worker whose answer's head never ends is cut, not read without bound.
        if (headBytes.length > WORKER_HEAD_MAX_BYTES) {
          upstream.off("data", onHead);
          answer(client, 502, JSON.stringify({ error: `bad gateway: worker ${lease.worker.id} answered the upgrade with more than 64 KiB and no end of its head` }), { [WORKER_ID_HEADER]: lease.worker.id });
          release();
        }
        return;
      }
      upstream.off("data", onHead);
      client.write(Buffer.concat([headBytes.subarray(0, at + 2), Buffer.from(`${WORKER_ID_HEADER}: ${lease.worker.id}\r\n`), headBytes.subarray(at + 2)]));
      joined = true;
      touch();
      upstream.on("data", touch);
      client.on("data", touch);
      // A WebSocket has no half of a connection: once either side has closed its own, what the
      // other has written goes on, and then both close (a worker or a client that keeps its half
      // open would otherwise hold the worker's slot for good).
      const over = () => {
        client.end(() => client.destroy());
        upstream.end(() => upstream.destroy());
        release();
      };
      upstream.once("end", over);
      client.once("end", over);
      upstream.pipe(client);
      client.pipe(upstream);
    };
    upstream.on("data", onHead);
  });
  upstream.on("error", () => {
    if (!client.writableEnded && upstream.bytesRead === 0)
      answer(client, 502, JSON.stringify({ error: `bad gateway: worker ${lease.worker.id} answered nothing` }), { [WORKER_ID_HEADER]: lease.worker.id });
    release();
  });
  upstream.on("close", release);
  client.on("close", () => {
    release();
    upstream.destroy();
  });
  client.on("error", release);
}
