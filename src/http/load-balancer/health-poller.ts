import { request } from "node:http";
import type { LoadBalancers } from "../../domain/load-balancer/balancer.js";
import type { LbWorkerState } from "../../domain/load-balancer/types.js";
import type { Logger } from "../../domain/logger.js";

/** Wall ms between two health checks of a worker: often enough that a worker ready is used at once. */
export const HEALTH_POLL_MS = 200;
/** A health check that has not answered in this long counts as unhealthy. */
const HEALTH_TIMEOUT_MS = 2000;

/** The health-check answer's meaning (the service's load-balancing overview). */
export const stateOfHealth = (status: number): LbWorkerState => (status === 200 ? "ready" : status === 204 ? "initializing" : "unhealthy");

/**
 * Checks the health of every worker with an HTTP server of its own (worker processes, servers at a
 * fixed URL), as the service's load balancer does: `GET {healthPath}` on its health port, in wall
 * time (a real server's start takes real time). A worker that has never answered is still starting
 * (its port refuses): initializing; once it has answered, a refused or failed check is unhealthy.
 */
export class HealthPoller {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly answered = new Set<string>();

  constructor(
    private readonly loadBalancers: LoadBalancers,
    private readonly log: Logger,
    private readonly intervalMs = HEALTH_POLL_MS,
  ) {}

  start(): this {
    this.schedule();
    return this;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () =>
        void this.tick()
          .catch((e: unknown) => this.log.error(`load balancer: a health check round failed: ${(e as Error).message}`))
          .finally(() => this.schedule()),
      this.intervalMs,
    );
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const workers = this.loadBalancers.processWorkers();
    await Promise.all(
      workers.map(async (w) => {
        const key = `${w.endpointId}/${w.id}`;
        const status = await check(w.target!.healthUrl);
        if (this.stopped) return;
        if (status === undefined && !this.answered.has(key)) return;
        if (status !== undefined) this.answered.add(key);
        const state = status === undefined ? "unhealthy" : stateOfHealth(status);
        if (state !== w.state) this.log.info(`load balancer: worker ${w.id} of ${w.endpointId} is ${state}${status === undefined ? " (its health check answered nothing)" : ` (health ${status})`}`);
        this.loadBalancers.health(w.endpointId, w.id, state);
      }),
    );
  }
}

/** The status of one health check, or undefined when it answered nothing. */
function check(url: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { method: "GET", timeout: HEALTH_TIMEOUT_MS, headers: { connection: "close" } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end();
  });
}
