import type { VirtualClock } from "../domain/clock.js";
import type { EndpointRegistry } from "../domain/endpoint-registry.js";
import type { JobService } from "../domain/jobs.js";
import type { LoadBalancers } from "../domain/load-balancer/balancer.js";
import type { LogBook } from "../domain/logbook.js";
import type { JobNotifier } from "../domain/notifier.js";
import type { WorkerProtocol } from "../domain/worker-protocol.js";

/**
 * What the worker processes an emulator starts may reach of its job engine, in the engine's own
 * types: the wiring (compose/) gives its runtime, which has these members, and each launcher
 * names those it reads (`Pick<LaunchEngine, ...>`).
 */
export interface LaunchEngine {
  clock: VirtualClock;
  endpoints: EndpointRegistry;
  jobs: JobService;
  loadBalancers: LoadBalancers;
  logs: LogBook;
  notifier: JobNotifier;
  workerProtocol: WorkerProtocol;
}
