import type { EndpointRegistry } from "../../../domain/endpoint-registry.js";
import type { LoadBalancers } from "../../../domain/load-balancer/balancer.js";
import { LB_PATH_PREFIX } from "../../../domain/load-balancer/types.js";

const CHIP: Record<string, string> = { initializing: "init", unhealthy: "sick" };

/**
 * One card per load-balancing endpoint: its requests (in flight, waiting for a worker, answered)
 * and its workers as chips, with where it is reached.
 */
export function LoadBalancersBody({ loadBalancers, endpoints }: { loadBalancers: LoadBalancers; endpoints: EndpointRegistry }) {
  const specs = endpoints.specs("LOAD_BALANCER");
  if (specs.length === 0) return null;
  return (
    <div class="endpoints load-balancers">
      {specs.map((s) => {
        const status = loadBalancers.status(s.id)!;
        const handler = typeof s.handler === "string" ? s.handler : s.handler.url;
        return (
          <article class="endpoint" data-endpoint={s.id} data-type="LOAD_BALANCER">
            <header>
              <h3 title={s.id}>{s.id}</h3>
              <span class="muted endpoint-name">load balancer · {`${LB_PATH_PREFIX}/${s.id}`}</span>
              <code class="handler" title="handler">{handler}</code>
            </header>
            <dl class="counts">
              <div>
                <dt>in flight</dt>
                <dd data-count="inFlight">{status.requests.inFlight}</dd>
              </div>
              <div class="count-queue">
                <dt>waiting</dt>
                <dd data-count="waiting">{status.requests.waiting}</dd>
              </div>
              <div>
                <dt>answered</dt>
                <dd data-count="served">{status.requests.served}</dd>
              </div>
            </dl>
            <div class="workers" aria-label="workers">
              {status.workers.ready + status.workers.initializing + status.workers.unhealthy === 0 ? <span class="muted">no workers</span> : null}
              {loadBalancers.workers(s.id).map((w) => {
                const state = w.state === "ready" ? (w.inFlight > 0 ? "running" : "idle") : w.state;
                return (
                  <span class={`worker w-${state}`} data-worker={w.id} data-state={state} title={`${w.id} · ${state} · ${w.inFlight} in flight${w.target ? ` · ${w.target.url}` : ""}`}>
                    {CHIP[state] ?? (state === "running" ? "run" : state)}
                  </span>
                );
              })}
            </div>
            <p class="settings muted">
              workers {s.workersMin}–{s.workersMax} · {typeof s.extra.scalerValue === "number" ? `${s.extra.scalerValue} requests per worker` : "REQUEST_COUNT"}
            </p>
          </article>
        );
      })}
    </div>
  );
}
