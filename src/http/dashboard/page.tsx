import type { Child } from "hono/jsx";
import { cancelRoute, healthRoute, purgeRoute, retryRoute, runRoute, runsyncRoute, statusRoute, statusSyncRoute, streamRoute } from "../routes/queue/routes.js";
import { JOB_STATUSES } from "../../domain/job.js";
import { WORKER_OPERATIONS } from "../../domain/operations.js";
import type { PanelName } from "./panels.js";

/** Operation names as fault rules and the journal use them: the queue routes' path segment (`status-sync`). */
const OPERATIONS = [runRoute, runsyncRoute, statusRoute, statusSyncRoute, streamRoute, cancelRoute, retryRoute, purgeRoute, healthRoute].map((r) => r.path.split("/")[3]!);
const FAULT_TYPES = ["http", "latency", "reset", "worker-crash", "timeout", "no-workers"] as const;
const ADVANCES: ReadonlyArray<[number, string]> = [
  [1000, "+1 s"],
  [60_000, "+1 min"],
  [3_600_000, "+1 h"],
  [86_400_000, "+1 day"],
];

export interface PageProps {
  version: string;
  assets: { css: string; js: string; icon: string };
  endpointIds: string[];
  bodies: Record<PanelName, Child>;
}

/** The whole dashboard, server-rendered; the client script then keeps each panel body live. */
export function DashboardPage({ version, assets, endpointIds, bodies }: PageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>minipod</title>
        <link rel="icon" href={assets.icon} type="image/svg+xml" />
        <link rel="stylesheet" href={assets.css} />
        <script src={assets.js} defer></script>
      </head>
      <body>
        <header class="top">
          <h1>
            <span class="logo" aria-hidden="true"></span>minipod <span class="version">{version}</span>
          </h1>
          <nav>
            <a href="/docs">API docs</a>
            <a href="/openapi.json">openapi.json</a>
          </nav>
          <span id="live" class="live" data-state="off" title="live updates (Server-Sent Events from /_emulator/feed)">
            static
          </span>
        </header>
        <p id="toast" class="toast" role="status" aria-live="polite" hidden></p>
        <main>
          <Card id="clock" title="Virtual clock" tools={<ClockButtons />}>
            {bodies.clock}
          </Card>
          <Card id="endpoints" title="Endpoints">
            {bodies.endpoints}
          </Card>
          <div class="split">
            <Card id="jobs" title="Jobs" tools={<JobFilter endpointIds={endpointIds} />} before={<SubmitForm endpointIds={endpointIds} />}>
              {bodies.jobs}
            </Card>
            <Card id="job" title="Job detail">
              {bodies.job}
            </Card>
          </div>
          <Card id="batches" title="Batches">
            {bodies.batches}
          </Card>
          <Card id="faults" title="Fault rules" tools={<button type="button" data-action="clear-faults">clear all</button>}>
            <FaultForm />
            <div id="faults-body">{bodies.faults}</div>
          </Card>
          <div class="split even">
            <Card id="webhooks" title="Webhook deliveries">
              {bodies.webhooks}
            </Card>
            <Card id="requests" title="Request journal" tools={<RequestFilter />}>
              {bodies.requests}
            </Card>
          </div>
        </main>
        <datalist id="endpoint-ids">
          {endpointIds.map((id) => (
            <option value={id} />
          ))}
        </datalist>
        <datalist id="operation-names">
          {OPERATIONS.map((o) => (
            <option value={o} />
          ))}
        </datalist>
        <footer>minipod {version} · times are virtual, in UTC · everything on this page is served by the emulator itself</footer>
      </body>
    </html>
  );
}

/** A panel: a fixed header with its controls, and a body the client replaces when data changes. */
function Card({ id, title, tools, before, children }: { id: string; title: string; tools?: Child; before?: Child; children: Child }) {
  const own = id === "faults"; // the fault card holds its form above the refreshable list
  return (
    <section class={`card card-${id}`} id={id} aria-labelledby={`${id}-title`}>
      <div class="card-head">
        <h2 id={`${id}-title`}>{title}</h2>
        {tools ? <div class="tools">{tools}</div> : null}
      </div>
      {before}
      {own ? children : <div id={`${id}-body`} class="card-body">{children}</div>}
    </section>
  );
}

function ClockButtons() {
  return (
    <>
      {ADVANCES.map(([ms, label]) => (
        <button type="button" data-advance={String(ms)}>
          {label}
        </button>
      ))}
      <button type="button" data-action="run-until-idle" class="primary">
        run until idle
      </button>
    </>
  );
}

function JobFilter({ endpointIds }: { endpointIds: string[] }) {
  return (
    <form id="jobs-filter" class="filter">
      <select name="endpoint" aria-label="endpoint">
        <option value="">all endpoints</option>
        {endpointIds.map((id) => (
          <option value={id}>{id}</option>
        ))}
      </select>
      <select name="status" aria-label="status">
        <option value="">any status</option>
        {JOB_STATUSES.map((s) => (
          <option value={s}>{s}</option>
        ))}
      </select>
      <input
        name="id"
        type="search"
        placeholder="find by id"
        aria-label="find a job by id"
        title="Any part of a job id (its end, as the list shows it, or the whole id): the list keeps the jobs it matches; Enter opens the first"
        size={14}
        maxlength={200}
        spellcheck={false}
        autocomplete="off"
      />
    </form>
  );
}

function RequestFilter() {
  return (
    <form id="requests-filter" class="filter">
      <input name="endpoint" list="endpoint-ids" placeholder="endpoint" aria-label="endpoint" size={8} />
      <input name="operation" list="operation-names" placeholder="operation" aria-label="operation" size={9} />
      <input name="status" placeholder="status" aria-label="HTTP status" inputmode="numeric" size={4} />
      <label class="check" title={`The worker protocol's requests (${[...WORKER_OPERATIONS].join(", ")}), left out unless ticked`}>
        <input type="checkbox" name="workers" value="show" />
        worker traffic
      </label>
    </form>
  );
}

/** A new job for an endpoint, as /run takes it: the client checks the input is a JSON object. */
function SubmitForm({ endpointIds }: { endpointIds: string[] }) {
  return (
    <form id="submit-form" class="submit-form" novalidate>
      <label class="submit-endpoint">
        endpoint
        <select name="endpoint" required>
          {endpointIds.map((id) => (
            <option value={id}>{id}</option>
          ))}
        </select>
      </label>
      <label class="submit-input">
        input (a JSON object)
        <textarea
          name="input"
          rows={2}
          spellcheck={false}
          placeholder={'{"prompt": "hello"}  (empty: {})'}
          title="The job's input, as /run takes it; Ctrl+Enter submits"
          aria-describedby="submit-error"
        ></textarea>
      </label>
      <button type="submit" class="primary" disabled={endpointIds.length === 0}>
        submit job
      </button>
      <p id="submit-error" class="form-error" role="alert" hidden></p>
    </form>
  );
}

function FaultForm() {
  return (
    <form id="fault-form" class="fault-form" data-type="http">
      <label>
        endpoint
        <input name="endpoint" list="endpoint-ids" placeholder="any" />
      </label>
      <label>
        operation
        <input name="operation" list="operation-names" placeholder="any" />
      </label>
      <label>
        fault
        <select name="type">
          {FAULT_TYPES.map((t) => (
            <option value={t}>{t}</option>
          ))}
        </select>
      </label>
      <label class="for-http">
        status
        <input name="status" type="number" min="400" max="599" value="503" />
      </label>
      <label class="for-latency">
        delay ms
        <input name="ms" type="number" min="0" step="1" value="2000" />
      </label>
      <label>
        times
        <input name="times" type="number" min="1" step="1" placeholder="∞" />
      </label>
      <label>
        probability
        <input name="probability" type="number" min="0" max="1" step="0.05" placeholder="1" />
      </label>
      <label>
        after
        <input name="after" type="number" min="0" step="1" placeholder="0" />
      </label>
      <button type="submit" class="primary">add rule</button>
    </form>
  );
}
