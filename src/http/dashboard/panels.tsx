import { EmulatorError } from "../../domain/errors.js";
import { JOB_STATUSES, type JobStatus } from "../../domain/job.js";
import type { Core } from "../core.js";
import { endpointStates } from "../routes/control/endpoints.js";
import { jobSummary } from "../job-summary.js";
import { JOB_ID_QUERY_MAX, JOB_LIST_DEFAULT, jobDetail } from "../routes/control/jobs.js";
import { fetchControl, pickQuery, type BatchOverview, type FaultRule, type InProcess, type JobEvent, type JournalEntry, type WebhookDelivery } from "./data.js";
import { BatchesBody } from "./panels/batches.js";
import { ClockBody } from "./panels/clock.js";
import { EndpointsBody } from "./panels/endpoints.js";
import { LoadBalancersBody } from "./panels/load-balancers.js";
import { FaultsBody } from "./panels/faults.js";
import { JobDetailBody } from "./panels/job-detail.js";
import { JobsBody } from "./panels/jobs.js";
import { JOURNAL_ROWS_MAX, RequestsBody, WebhooksBody } from "./panels/journal.js";

/** The parts of the dashboard the client script refreshes on its own. */
export const PANELS = ["clock", "endpoints", "jobs", "job", "batches", "faults", "webhooks", "requests"] as const;
export type PanelName = (typeof PANELS)[number];

/** Query parameters a panel may receive (the client sends each panel its own filters). */
export type PanelQuery = Partial<Record<"endpoint" | "status" | "operation" | "offset" | "id" | "workers", string>>;

export interface PanelContext {
  core: Pick<Core, "clock" | "endpoints" | "endpointView" | "loadBalancers" | "jobStore"> & Parameters<typeof endpointStates>[0];
  app: InProcess;
  query: PanelQuery;
}

/** Renders one panel's body from the emulator's state (or its control routes). */
export async function renderPanel(name: PanelName, { core, app, query }: PanelContext) {
  switch (name) {
    case "clock":
      return <ClockBody clock={core.clock} />;
    case "endpoints": {
      const queues = endpointStates(core);
      const balanced = core.endpoints.specs("LOAD_BALANCER").length > 0;
      return (
        <>
          {queues.length > 0 || !balanced ? <EndpointsBody endpoints={queues} views={Object.fromEntries(queues.map((e) => [e.id, core.endpointView(e.id)]))} /> : null}
          <LoadBalancersBody loadBalancers={core.loadBalancers} endpoints={core.endpoints} />
        </>
      );
    }
    case "jobs": {
      const offset = query.offset ? Number(query.offset) : 0;
      if (!Number.isSafeInteger(offset) || offset < 0) throw new EmulatorError("BAD_REQUEST", `offset must be a non-negative integer, got "${query.offset}"`);
      const status = jobStatus(query.status);
      const id = query.id?.trim() || undefined;
      if (id !== undefined && id.length > JOB_ID_QUERY_MAX) throw new EmulatorError("BAD_REQUEST", `id must be at most ${JOB_ID_QUERY_MAX} characters, got ${id.length}`);
      const page = core.jobStore.list({ endpointId: query.endpoint || undefined, status, idContains: id, limit: JOB_LIST_DEFAULT, offset });
      const now = core.clock.now();
      return <JobsBody page={{ jobs: page.jobs.map((j) => jobSummary(j, now)), count: page.total, limit: JOB_LIST_DEFAULT, offset }} />;
    }
    case "job": {
      const job = query.id ? core.jobStore.get(query.id) : undefined;
      // The timeline outlives the job (ttl, retention), so it is asked for even when the job is gone.
      const events = query.id ? await fetchControl<{ events: JobEvent[] }>(app, `/_emulator/jobs/${encodeURIComponent(query.id)}/events`) : undefined;
      return <JobDetailBody id={query.id} job={job ? jobDetail(core, job) : undefined} events={events} />;
    }
    case "batches":
      return <BatchesBody batches={await fetchControl<{ batches: BatchOverview[] }>(app, "/_emulator/batches")} />;
    case "faults":
      return <FaultsBody faults={await fetchControl<{ faults: FaultRule[] }>(app, "/_emulator/faults")} />;
    case "webhooks":
      return <WebhooksBody webhooks={await fetchControl<{ deliveries: WebhookDelivery[] }>(app, "/_emulator/webhooks")} />;
    case "requests": {
      // Only the newest entries are shown, so only those are asked for. The worker protocol's
      // traffic (a worker polls all the time) is left out by the route, unless asked for, so the
      // newest entries and their count are those of the rest.
      const showWorkers = query.workers === "show";
      const filter = pickQuery({ ...query, worker: showWorkers ? undefined : "exclude", limit: String(JOURNAL_ROWS_MAX) }, ["endpoint", "operation", "status", "worker", "limit"]);
      return <RequestsBody requests={await fetchControl<{ requests: JournalEntry[]; count?: number }>(app, `/_emulator/requests${filter}`)} workersHidden={!showWorkers} />;
    }
  }
}

function jobStatus(s: string | undefined): JobStatus | undefined {
  if (!s) return undefined;
  if ((JOB_STATUSES as readonly string[]).includes(s)) return s as JobStatus;
  throw new EmulatorError("BAD_REQUEST", `unknown job status "${s}"; expected one of ${JOB_STATUSES.join(", ")}`);
}
