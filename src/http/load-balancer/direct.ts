import type { IncomingMessage, ServerResponse } from "node:http";
import { REQUEST_FAULTS } from "../../domain/faults.js";
import { LB_PAYLOAD_MAX_BYTES } from "../../domain/limits.js";
import { LB_PATH_PREFIX, LbRefusal, parseAffinity, type Lease } from "../../domain/load-balancer/types.js";
import type { HeaderSink } from "../auth.js";
import type { Core } from "../core.js";
import { requestLogLine, type Admission } from "../gate.js";
import type { RequestJournal } from "../journal.js";
import { routeInfo } from "../route-info.js";
import { LB_WORKER_FAULTS, WORKER_ID_HEADER } from "./serve.js";
import { sendUpstream, upstreamTarget } from "./upstream.js";

/**
 * Requests to worker processes (and servers given by URL) relayed between node's request and
 * response and the worker's, before Hono: the same steps as the app's route (authentication,
 * the balancer's choice and refusals, the limits, the journal, the log line) without turning each
 * side into web streams and back, which cost more than the relay itself. It takes only what it
 * answers as the app would: no request fault armed, a key the gate admits, a body of declared
 * length within 30 MB, no upgrade; everything else goes to the app (`serve.ts`).
 */
export class LoadBalancerDirect {
  constructor(
    private readonly core: Pick<Core, "loadBalancers" | "faults" | "paths" | "log" | "clock">,
    private readonly journal: RequestJournal,
    private readonly admit: Admission,
  ) {}

  /** Relays the request and returns true, or returns false having touched nothing. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? "";
    if (!url.startsWith(`${LB_PATH_PREFIX}/`) || req.headers.upgrade !== undefined) return false;
    const mark = url.indexOf("?");
    const path = mark === -1 ? url : url.slice(0, mark);
    const idEnd = path.indexOf("/", LB_PATH_PREFIX.length + 1);
    const endpointId = path.slice(LB_PATH_PREFIX.length + 1, idEnd === -1 ? undefined : idEnd);
    const lb = this.core.loadBalancers;
    const handler = lb.handlerOf(endpointId);
    if (handler?.kind !== "process" && handler?.kind !== "url") return false;
    if (this.core.faults.armed(REQUEST_FAULTS) || this.core.faults.armed(LB_WORKER_FAULTS)) return false;
    const length = req.headers["content-length"];
    const chunked = req.headers["transfer-encoding"] !== undefined;
    if (chunked || (length !== undefined && !(Number(length) <= LB_PAYLOAD_MAX_BYTES))) return false;
    const method = req.method ?? "GET";
    const route = this.core.paths.classify(method, path);
    const headers: Record<string, string> = {};
    const sink: HeaderSink = { header: (k, v) => void (headers[k] = v) };
    let release: (() => void) | undefined;
    try {
      release = this.admit(method, path, req.headers.authorization, route, sink);
    } catch {
      // Refused: the app gives the same answer, with its problem+json.
      return false;
    }
    const startedMs = performance.now();
    const at = this.journal.enabled ? this.journal.now() : 0;
    const info = routeInfo(path, route);
    // The path after the endpoint's id, with the query: `/lb/api?x=1` reaches the worker as `/?x=1`.
    const rest = idEnd === -1 ? `/${mark === -1 ? "" : url.slice(mark)}` : url.slice(idEnd);
    const finish = (status: number) => {
      release?.();
      release = undefined;
      if (this.journal.enabled) {
        this.journal.write({
          method,
          path,
          query: mark === -1 || mark === url.length - 1 ? undefined : url.slice(mark + 1),
          endpoint: info.endpoint,
          operation: info.operation,
          status,
          at,
          durationMs: this.journal.since(startedMs),
          bodyText: undefined,
          responseText: undefined,
        });
      }
      if (this.core.log.enabled("info")) this.core.log.info(requestLogLine(method, path, status, startedMs));
    };
    const refuse = (status: number, error: string, workerId?: string) => {
      const body = JSON.stringify({ error });
      res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body), ...(workerId ? { [WORKER_ID_HEADER]: workerId } : {}) });
      res.end(body);
      finish(status);
    };
    let gone = false;
    res.once("close", () => (gone = true));
    lb.acquire(endpointId, parseAffinity(req.headers[WORKER_ID_HEADER] as string | undefined))
      .then(
        (lease) => {
          if (!gone) return this.relay(req, res, rest, lease, headers, refuse, finish);
          // The client went away while it waited for a worker.
          lease.release();
          finish(499);
        },
        (e: unknown) => (e instanceof LbRefusal ? refuse(e.status, e.error) : refuse(500, (e as Error).message)),
      )
      .catch((e: unknown) => {
        this.core.log.error(`load balancer: ${method} ${path} failed: ${(e as Error).stack ?? String(e)}`);
        res.destroy();
      });
    return true;
  }

  private relay(
    req: IncomingMessage,
    res: ServerResponse,
    rest: string,
    lease: Lease,
    extra: Record<string, string>,
    refuse: (status: number, error: string, workerId?: string) => void,
    finish: (status: number) => void,
  ): void {
    const worker = lease.worker;
    let answered = false;
    let timedOut = false;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      lease.release();
      finish(timedOut ? 524 : res.statusCode);
    };
    // A body only when one is declared: a request without one ends where its headers do.
    const body = req.headers["content-length"] === undefined || req.headers["content-length"] === "0" ? null : req;
    const abort = sendUpstream(upstreamTarget(worker.target!.url), req, rest, body, {
      head: (status, statusText, headers) => {
        answered = true;
        for (const name in extra) headers.push(name, extra[name]!);
        headers.push(WORKER_ID_HEADER, worker.id);
        res.writeHead(status, statusText, headers);
      },
      data: (chunk, resume) => res.write(chunk) || (res.once("drain", resume), false),
      end: () => res.end(),
      error: (e) => {
        if (answered || res.headersSent) {
          res.destroy();
          return end();
        }
        ended = true;
        lease.release();
        if (timedOut) return refuse(524, "request timed out: processing took longer than 5.5 minutes", worker.id);
        if (res.destroyed) return finish(499);
        const cause = (e as NodeJS.ErrnoException).code ?? e.message;
        this.core.log.warn(`load balancer: worker ${worker.id} answered nothing to ${req.method} ${rest}: ${cause}`);
        refuse(502, `bad gateway: worker ${worker.id} answered nothing (${cause})`, worker.id);
      },
    });
    lease.onTimeout(() => {
      timedOut = true;
      abort(new Error("processing took longer than 5.5 minutes"));
      if (answered) res.destroy();
    });
    // The client going away aborts the worker's request; an answer ended frees the worker.
    res.once("close", () => {
      if (!res.writableFinished) abort(new Error("the client went away"));
      if (answered || res.writableFinished) end();
    });
  }
}
