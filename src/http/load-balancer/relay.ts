import type { IncomingMessage, ServerResponse } from "node:http";
import { LB_PAYLOAD_MAX_BYTES } from "../../domain/limits.js";
import { LbRefusal, parseAffinity, type Lease } from "../../domain/load-balancer/types.js";
import type { Core } from "../core.js";
import type { Gate } from "../gate.js";
import { RawExchange } from "../raw-exchange.js";
import { routeInfo, type RouteInfo } from "../route-info.js";
import type { FastEntry } from "../route-table.js";
import type { ServiceRoute } from "../surfaces.js";
import { UnpassableAnswer, WorkerStatusError } from "./proxy.js";
import { answeredNothing, cannotPass, LB_WORKER_FAULTS, refusalOf, TIMED_OUT, WORKER_ID_HEADER, wrongStatus } from "./serve.js";
import { sendUpstream, upstreamTarget } from "./upstream.js";

/** What is known of a path to a load-balancing endpoint: the endpoint, and where the worker's path starts. */
interface LbPath {
  endpointId: string;
  /** Index of the path after the endpoint's id (-1: none). */
  restAt: number;
  service: { route: ServiceRoute; info: RouteInfo };
}

/**
 * The `/lb/{endpoint_id}/*` routes' fast entry, for worker processes (and servers given by URL):
 * behind the same gate as every route, the request is relayed between node's request and
 * response and the worker's, without turning each side into web streams and back, which cost
 * more than the relay itself. It takes only what it answers as Hono's route would: a handler that
 * is a process or a URL, no worker fault armed, a body of declared length within 30 MB, no
 * upgrade; everything else goes to the route (`serve.ts`).
 */
export class LoadBalancerRelay implements FastEntry<LbPath> {
  constructor(
    private readonly core: Pick<Core, "loadBalancers" | "faults" | "log" | "failures" | "paths" | "workerConnections">,
    private readonly gate: Gate,
  ) {}

  accepts(method: string, path: string, params: Record<string, string>): LbPath | null {
    const endpointId = params.endpoint_id;
    if (endpointId === undefined) return null;
    const at = path.indexOf("/", 1 + path.indexOf("/", 1));
    const route = this.core.paths.classify(method, path);
    return { endpointId, restAt: at === -1 ? -1 : at, service: { route, info: routeInfo(path, route) } };
  }

  take(req: IncomingMessage, res: ServerResponse, { endpointId, restAt, service }: LbPath, path: string, query: string | undefined): boolean {
    if (req.headers.upgrade !== undefined) return false;
    const handler = this.core.loadBalancers.handlerOf(endpointId);
    if (handler?.kind !== "process" && handler?.kind !== "url") return false;
    if (this.core.faults.armed(LB_WORKER_FAULTS)) return false;
    const length = req.headers["content-length"];
    const chunked = req.headers["transfer-encoding"] !== undefined;
    if (chunked || (length !== undefined && !(Number(length) <= LB_PAYLOAD_MAX_BYTES))) return false;
    const x = new RawExchange(req, res, req.method ?? "GET", path, query === "" ? undefined : query, this.core.failures, service);
    // The path after the endpoint's id, with the query: `/lb/api?x=1` reaches the worker as `/?x=1`.
    const rest = `${restAt === -1 ? "/" : path.slice(restAt)}${query === undefined ? "" : `?${query}`}`;
    x.next = () => this.relayed(x, endpointId, rest);
    x.answerThrough(this.gate);
    return true;
  }

  /** Waits for a worker and relays the exchange: settles once the answer has ended (or was refused). */
  private relayed(x: RawExchange, endpointId: string, rest: string): Promise<void> {
    const { req, res } = x;
    return new Promise<void>((done) => {
      const finish = (status: number) => {
        x.wrote(status);
        done();
      };
      const refuse = (status: number, error: string, workerId?: string) => {
        const { headers, body } = refusalOf(error, workerId);
        res.writeHead(status, { ...x.headers, ...headers, "content-length": Buffer.byteLength(body) });
        res.end(body);
        finish(status);
      };
      let gone = false;
      res.once("close", () => (gone = true));
      this.core.loadBalancers
        .acquire(endpointId, parseAffinity(req.headers[WORKER_ID_HEADER] as string | undefined))
        .then(
          (lease) => {
            if (!gone) return this.relay(x, rest, lease, refuse, finish);
            // The client went away while it waited for a worker.
            lease.release();
            finish(499);
          },
          (e: unknown) => (e instanceof LbRefusal ? refuse(e.status, e.error) : refuse(500, (e as Error).message)),
        )
        .catch((e: unknown) => {
          this.core.log.error(`load balancer: ${x.method} ${x.path} failed: ${(e as Error).stack ?? String(e)}`);
          res.destroy();
          finish(res.statusCode);
        });
    });
  }

  private relay(x: RawExchange, rest: string, lease: Lease, refuse: (status: number, error: string, workerId?: string) => void, finish: (status: number) => void): void {
    const { req, res } = x;
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
    const abort = sendUpstream(this.core.workerConnections.relay, upstreamTarget(worker.target!.url), req, rest, body, {
      head: (status, statusText, headers) => {
        // What the gate set (RateLimit) goes with the worker's answer.
        for (const name in x.headers) headers.push(name, String(x.headers[name]));
        headers.push(WORKER_ID_HEADER, worker.id);
        try {
          res.writeHead(status, statusText, headers);
        } catch (e) {
          // Refused before anything was written; the 502 that follows has a status text of its own.
          res.statusMessage = "";
          throw e;
        }
        answered = true;
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
        if (timedOut) return refuse(524, TIMED_OUT, worker.id);
        if (res.destroyed) return finish(499);
        if (e instanceof WorkerStatusError) {
          this.core.log.warn(`load balancer: worker ${worker.id} answered status ${e.status} to ${req.method} ${rest}; the client gets 502`);
          return refuse(502, wrongStatus(worker.id, e.status), worker.id);
        }
        if (e instanceof UnpassableAnswer) {
          this.core.log.warn(`load balancer: the answer of worker ${worker.id} to ${req.method} ${rest} cannot be passed on: ${e.message}`);
          return refuse(502, cannotPass(worker.id, e.message), worker.id);
        }
        const cause = (e as NodeJS.ErrnoException).code ?? e.message;
        this.core.log.warn(`load balancer: worker ${worker.id} answered nothing to ${req.method} ${rest}: ${cause}`);
        refuse(502, answeredNothing(worker.id, cause), worker.id);
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
