import type { VirtualClock } from "../clock.js";
import { describeHandler, type EndpointSpec, type HandlerRef } from "../endpoint.js";
import { EXTERNAL_HANDLER } from "../external-workers.js";
import { isHttpRef } from "../handlers/http-handler.js";
import { LB_HEALTH_PATH_DEFAULT } from "../limits.js";
import { servedOnly, type EndpointRegistry } from "../endpoint-registry.js";
import { LbPool } from "./pool.js";
import { LbRefusal, type LbLauncher, type Affinity, type Lease, type LbStatus, type LbTarget, type LbWorker, type LbWorkerState } from "./types.js";

/**
 * What answers a load-balancing endpoint's requests: worker processes (`external`), one HTTP
 * server at a fixed URL, the built-in `openai` or `echo` answers, or a function given by name
 * (an in-process fetch handler: `(request) => response`).
 */
export type LbHandler = { kind: "process" } | { kind: "url"; url: string } | { kind: "openai" } | { kind: "echo" } | { kind: "function"; name: string };

/** What an endpoint's handler reference means on a load-balancing endpoint. */
export function lbHandlerOf(ref: HandlerRef): LbHandler {
  const name = typeof ref === "string" ? ref : ref.url;
  if (name === EXTERNAL_HANDLER) return { kind: "process" };
  if (isHttpRef(name)) return { kind: "url", url: name.replace(/\/+$/, "") };
  if (name === "openai" || name === "echo") return { kind: name };
  return { kind: "function", name };
}

/**
 * The load-balancing endpoints being served, one pool of workers each (see `LbPool`). The
 * scheduler hands it the endpoints of that type as they are attached, updated and detached, so
 * start, reset, restore and the management surface reach both kinds through one door.
 */
export class LoadBalancers {
  private readonly pools = new Map<string, LbPool>();
  /**
   * Worker processes that registered, by endpoint: they outlive their pool (a reset or a restore
   * attaches the endpoint anew while the processes run on), and join the new pool at once.
   */
  private readonly processes = new Map<string, Map<string, LbTarget>>();
  /** Who starts and stops an endpoint's worker processes as it scales, when someone does. */
  private readonly launchers = new Map<string, LbLauncher>();

  private readonly endpoints: EndpointRegistry;

  /** `endpoints`: told which load-balancing endpoints are served (a registry of its own when not given). */
  constructor(private readonly d: { clock: VirtualClock; newWorkerId: () => string; endpoints?: EndpointRegistry }) {
    this.endpoints = d.endpoints ?? servedOnly();
    // A worker process starting is real work: the clock does not skip past its start (see Activity).
    d.clock.activity.addSource(() => {
      for (const pool of this.pools.values()) if (pool.starting()) return true;
      return false;
    });
  }

  handlerOf(endpointId: string): LbHandler | undefined {
    const spec = this.endpoints.spec(endpointId, "LOAD_BALANCER");
    return spec && lbHandlerOf(spec.handler);
  }

  attach(spec: EndpointSpec, warm: boolean): void {
    this.detach(spec.id, "endpoint replaced");
    const handler = lbHandlerOf(spec.handler);
    const pool = new LbPool(spec, handler.kind === "process" || handler.kind === "url" ? "process" : "simulated", this.d);
    this.pools.set(spec.id, pool);
    this.endpoints.serve(spec);
    // A server at a fixed URL is the endpoint's one worker, health-checked like a process.
    if (handler.kind === "url") pool.register(this.d.newWorkerId(), { url: handler.url, healthUrl: `${handler.url}${LB_HEALTH_PATH_DEFAULT}` });
    if (handler.kind === "process") for (const [workerId, target] of this.processes.get(spec.id) ?? []) pool.register(workerId, target);
    if (handler.kind === "process") pool.setLauncher(this.launchers.get(spec.id));
    pool.start(warm);
  }

  update(spec: EndpointSpec): void {
    const pool = this.pools.get(spec.id);
    if (!pool || describeHandler(pool.settings.handler) !== describeHandler(spec.handler)) return this.attach(spec, false);
    pool.update(spec);
    this.endpoints.serve(spec);
  }

  /** Worker processes of an `external` endpoint started and stopped by `launcher` as its pool scales. */
  setLauncher(endpointId: string, launcher: LbLauncher | undefined): void {
    if (launcher) this.launchers.set(endpointId, launcher);
    else this.launchers.delete(endpointId);
    const pool = this.pools.get(endpointId);
    if (pool?.kind === "process" && lbHandlerOf(pool.settings.handler).kind === "process") pool.setLauncher(launcher);
  }

  /** Who starts and stops the endpoint's worker processes now, if anyone. */
  launcherOf(endpointId: string): LbLauncher | undefined {
    return this.launchers.get(endpointId);
  }

  detach(endpointId: string, why = "endpoint deleted"): void {
    const pool = this.pools.get(endpointId);
    if (!pool) return;
    this.pools.delete(endpointId);
    this.endpoints.retire(endpointId);
    pool.close(new LbRefusal(404, `${why}: ${endpointId}`));
  }

  detachAll(): void {
    for (const id of [...this.pools.keys()]) this.detach(id, "endpoint stopped");
  }

  /** A worker for a request to the endpoint (see `LbPool.acquire`). */
  acquire(endpointId: string, affinity: Affinity): Promise<Lease> {
    const pool = this.pools.get(endpointId);
    if (!pool) return Promise.reject(new LbRefusal(404, `no load-balancing endpoint ${endpointId}`));
    return pool.acquire(affinity);
  }

  workers(endpointId: string): LbWorker[] {
    return this.pools.get(endpointId)?.list() ?? [];
  }

  status(endpointId: string): LbStatus | undefined {
    return this.pools.get(endpointId)?.status();
  }

  /**
   * `/v2/{endpoint_id}/health` of a load-balancing endpoint, in the queue's shape: its workers by
   * state, its requests in flight (`inProgress`), waiting for a worker (`inQueue`) and answered
   * (`completed`); undefined for any other endpoint.
   */
  healthCounts(
    endpointId: string,
  ):
    | { jobs: Record<"completed" | "failed" | "inProgress" | "inQueue" | "retried", number>; workers: Record<"idle" | "initializing" | "ready" | "running" | "throttled" | "unhealthy", number> }
    | undefined {
    const s = this.status(endpointId);
    if (!s) return undefined;
    const { workers: w, requests: r } = s;
    return {
      jobs: { completed: r.served, failed: 0, inProgress: r.inFlight, inQueue: r.waiting, retried: 0 },
      workers: { idle: w.idle, initializing: w.initializing, ready: w.ready, running: w.running, throttled: 0, unhealthy: w.unhealthy },
    };
  }

  /** A worker process of an `external` endpoint starts listening; false when the endpoint takes none. */
  register(endpointId: string, workerId: string, target: LbTarget): boolean {
    const pool = this.pools.get(endpointId);
    if (!pool || lbHandlerOf(pool.settings.handler).kind !== "process") return false;
    let known = this.processes.get(endpointId);
    if (!known) this.processes.set(endpointId, (known = new Map()));
    known.set(workerId, target);
    pool.register(workerId, target);
    return true;
  }

  health(endpointId: string, workerId: string, state: LbWorkerState): void {
    this.pools.get(endpointId)?.health(workerId, state);
  }

  remove(endpointId: string, workerId: string): void {
    this.processes.get(endpointId)?.delete(workerId);
    this.pools.get(endpointId)?.remove(workerId);
  }

  /** Every worker with an HTTP server of its own, for the health checks. */
  processWorkers(): LbWorker[] {
    return [...this.pools.values()].filter((p) => p.kind === "process").flatMap((p) => p.list());
  }
}
