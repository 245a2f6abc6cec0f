import type { EndpointState } from "../../routes/control/endpoints.js";
import { Empty } from "../components.js";
import { clockTime, duration, isoTime, shortId } from "../format.js";

type ExternalWorker = NonNullable<EndpointState["externalWorkers"]>[number];

/** The worker processes of an "external" endpoint: state, the jobs each runs, its last heartbeat. */
function ExternalWorkers({ workers }: { workers: ExternalWorker[] }) {
  if (workers.length === 0) return <p class="ext-workers muted">no worker process yet: start one with <code>minipod worker -- python handler.py</code></p>;
  return (
    <ul class="ext-workers" aria-label="worker processes">
      {workers.map((w) => (
        <li data-worker={w.id} data-state={w.state} title={w.reason ?? `${w.id} · ${w.state}`}>
          <span class={`worker w-${w.state}`}>{w.state}</span> <code>{w.id}</code>
          {w.jobIds.length > 0 ? <span class="ext-jobs"> · {w.jobIds.map((id) => <code data-job-id={id}>{shortId(id)}</code>)}</span> : null}
          <span class="muted" title={w.lastHeartbeatAt !== undefined ? isoTime(w.lastHeartbeatAt) : "no heartbeat yet"}>
            {" "}· {w.lastHeartbeatAt !== undefined ? `beat ${clockTime(w.lastHeartbeatAt)}` : "no heartbeat yet"}
          </span>
          {w.reason ? <span class="muted"> · {w.reason}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** Fields of an endpoint's view the card shows otherwise (its header), or that name this host rather than the endpoint. */
const SHOWN_ELSEWHERE = new Set(["id", "name", "requestUrls"]);

/** A field's value on one line: lists joined, objects as key=value pairs. */
function fieldText(v: unknown): string {
  if (v === null || v === undefined) return "none";
  if (Array.isArray(v)) return v.length ? v.map(fieldText).join(", ") : "none";
  if (typeof v === "object") return Object.entries(v).map(([k, x]) => `${k}=${fieldText(x)}`).join(" · ");
  return String(v);
}

/**
 * The endpoint as its management resource shows it (the REST v2 view, env left out), every
 * field under the view's name: a field added to the view appears here with no edit of the page.
 */
function ResourceFields({ fields }: { fields: Record<string, unknown> }) {
  const shown = Object.entries(fields).filter(([k]) => !SHOWN_ELSEWHERE.has(k));
  return (
    <details class="resource-fields">
      <summary>settings</summary>
      <dl>
        {shown.map(([k, v]) => (
          <div data-field={k}>
            <dt>{k}</dt>
            <dd>{fieldText(v)}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/** One card per served endpoint: its workers as chips, its queue depth and job counts, its settings. */
export function EndpointsBody({ endpoints, views = {} }: { endpoints: EndpointState[]; views?: Record<string, Record<string, unknown> | undefined> }) {
  if (endpoints.length === 0) return <Empty>No endpoints. Add some under "endpoints" in emulator.config.json.</Empty>;
  return (
    <div class="endpoints">
      {endpoints.map((e) => (
        <article class="endpoint" data-endpoint={e.id}>
          <header>
            <h3 title={e.id}>
              <a href={`#endpoint=${encodeURIComponent(e.id)}`} title={`show ${e.id}'s jobs and submit to it`}>
                {e.id}
              </a>
            </h3>
            {e.name !== e.id ? (
              <span class="muted endpoint-name" title={e.name}>
                {e.name}
              </span>
            ) : null}
            <code class="handler" title="handler">{e.handler}</code>
          </header>
          <dl class="counts">
            <div class="count-queue">
              <dt>queue</dt>
              <dd data-count="IN_QUEUE">{e.jobs.IN_QUEUE}</dd>
            </div>
            <div>
              <dt>running</dt>
              <dd data-count="IN_PROGRESS">{e.jobs.IN_PROGRESS}</dd>
            </div>
            <div>
              <dt>completed</dt>
              <dd data-count="COMPLETED">{e.jobs.COMPLETED}</dd>
            </div>
            <div>
              <dt>failed</dt>
              <dd data-count="FAILED">{e.jobs.FAILED + e.jobs.TIMED_OUT}</dd>
            </div>
          </dl>
          {e.externalWorkers ? (
            // Served by worker processes: the simulated pool's scaling settings do not apply.
            <>
              <ExternalWorkers workers={e.externalWorkers} />
              <p class="settings muted">
                worker processes: {e.externalWorkers.filter((w) => w.state === "idle" || w.state === "running").length} live
                {e.executionTimeoutMs !== undefined ? ` · timeout ${duration(e.executionTimeoutMs)}` : ""}
                {e.throttled ? " · throttled" : ""}
              </p>
            </>
          ) : (
            <>
              <div class="workers" aria-label="workers">
                {e.workers.length === 0 ? <span class="muted">no workers (scaled to zero)</span> : null}
                {e.workers.map((w) => (
                  <span class={`worker w-${w.state}`} data-worker={w.id} data-state={w.state} title={`${w.id} · ${w.state}${w.jobId ? ` · job ${w.jobId}` : ""}`}>
                    {w.state === "running" ? "run" : w.state === "idle" ? "idle" : "init"}
                  </span>
                ))}
              </div>
              <p class="settings muted">
                workers {e.workersMin}–{e.workersMax} · cold start {duration(e.coldStartMs)} · idle {duration(e.idleTimeout * 1000)}
                {e.executionTimeoutMs !== undefined ? ` · timeout ${duration(e.executionTimeoutMs)}` : ""}
                {e.throttled ? " · throttled" : ""}
              </p>
            </>
          )}
          {views[e.id] ? <ResourceFields fields={views[e.id]!} /> : null}
        </article>
      ))}
    </div>
  );
}
