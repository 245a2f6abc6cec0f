import { isLoadBalancer, type EndpointSpec, type EndpointType } from "./endpoint.js";
import type { EndpointStore } from "./ports.js";

/**
 * The endpoints: those stored (made by the config or the management API, documents of kind
 * "endpoint") and, of them, those being served, with the settings they are served with. It is
 * where the job engine, the queue's worker pools and the load-balancing pools ask whether an
 * endpoint exists and what it is: the scheduler and the load balancers tell it what they serve
 * as they attach and detach, and keep only their workers.
 */
export class EndpointRegistry {
  /** Served endpoints, in the order they were attached. */
  private readonly served = new Map<string, EndpointSpec>();

  constructor(readonly stored: EndpointStore) {}

  /** An endpoint is served with these settings (attached, or updated). */
  serve(spec: EndpointSpec): void {
    this.served.set(spec.id, spec);
  }

  /** It is served no longer. */
  retire(endpointId: string): void {
    this.served.delete(endpointId);
  }

  /** The settings an endpoint is served with, when it is served (as one of `type`, when given). */
  spec(endpointId: string, type?: EndpointType): EndpointSpec | undefined {
    const spec = this.served.get(endpointId);
    return spec && (type === undefined || typeOf(spec) === type) ? spec : undefined;
  }

  /** Whether an endpoint is served (as one of `type`, when given). */
  has(endpointId: string, type?: EndpointType): boolean {
    return this.spec(endpointId, type) !== undefined;
  }

  /** The served endpoints (of `type`, when given), in the order they were attached. */
  specs(type?: EndpointType): EndpointSpec[] {
    const all = [...this.served.values()];
    return type === undefined ? all : all.filter((s) => typeOf(s) === type);
  }

  /** An endpoint as served, else as stored (one whose handler is missing is stored, not served). */
  of(endpointId: string): EndpointSpec | undefined {
    return this.served.get(endpointId) ?? this.stored.get(endpointId);
  }

  /** Every stored endpoint in the order it was made, with the settings it is served with. */
  list(): EndpointSpec[] {
    return this.stored.list().map((s) => this.served.get(s.id) ?? s);
  }
}

const typeOf = (spec: EndpointSpec): EndpointType => (isLoadBalancer(spec) ? "LOAD_BALANCER" : "QUEUE");

/** A registry that keeps nothing stored: for a pool used on its own, where only what is served matters. */
export const servedOnly = (): EndpointRegistry => new EndpointRegistry({ list: () => [], get: () => undefined, save() {}, delete: () => false, deleteAll() {} });
