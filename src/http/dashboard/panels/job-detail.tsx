import type { Child } from "hono/jsx";
import type { Fetched, JobEvent } from "../data.js";
import type { JobSummaryView } from "../../job-summary.js";
import { isFinal, type JobStatus } from "../../../domain/job.js";
import { Empty, StatusBadge, Time, Unavailable } from "../components.js";
import { anyTime, duration, prettyJson } from "../format.js";

export interface JobDetailView extends JobSummaryView {
  input: unknown;
  output?: unknown;
  error?: string;
  webhook?: string;
  policy: { executionTimeout: number; ttl: number; lowPriority: boolean };
  expiresAt: number;
  timeoutAt?: number;
  retainUntil?: number;
  stream: unknown[];
  streamCount: number;
}

/** A selected job in full: input, output or error, stream chunks and its event timeline. */
export function JobDetailBody({ id, job, events }: { id: string | undefined; job: JobDetailView | undefined; events: Fetched<{ events: JobEvent[] }> | undefined }) {
  if (!id) return <Empty>Select a job to see its input, output, stream and timeline.</Empty>;
  if (!job) {
    return (
      <div class="detail">
        <Empty>Job {id} is gone (its ttl or result retention ended, or it was purged).</Empty>
        {events?.ok ? (
          <>
            <h4>timeline</h4>
            <Timeline events={events.data.events} />
          </>
        ) : null}
      </div>
    );
  }
  return (
    <div class="detail" data-detail={job.id}>
      <header class="detail-head">
        <code class="mono job-id">{job.id}</code>
        <StatusBadge status={job.status} />
        <JobActions id={job.id} status={job.status} />
      </header>
      <dl class="facts">
        <Fact k="endpoint">{job.endpointId}</Fact>
        <Fact k="submitted with">/{job.kind}</Fact>
        <Fact k="worker">{job.workerId ?? "–"}</Fact>
        <Fact k="attempts">
          {job.attempt}
          {job.retries > 0 ? ` (${job.retries} retr${job.retries === 1 ? "y" : "ies"})` : ""}
        </Fact>
        <Fact k="submitted">
          <Time ms={job.createdAt} />
        </Fact>
        <Fact k="started">
          <Time ms={job.startedAt} />
        </Fact>
        <Fact k="finished">
          <Time ms={job.completedAt} />
        </Fact>
        <Fact k="delay · run">
          {duration(job.delayTime) || "–"} · {duration(job.executionTime) || "–"}
        </Fact>
        <Fact k="expires (ttl)">
          <Time ms={job.expiresAt} withDate />
        </Fact>
        <Fact k="result kept until">
          <Time ms={job.retainUntil} withDate />
        </Fact>
        <Fact k="policy">
          timeout {duration(job.policy.executionTimeout)} · ttl {duration(job.policy.ttl)}
          {job.policy.lowPriority ? " · low priority" : ""}
        </Fact>
        {job.webhook ? <Fact k="webhook">{job.webhook}</Fact> : null}
      </dl>
      <h4>input</h4>
      <pre class="json">{prettyJson(job.input)}</pre>
      {job.error !== undefined ? (
        <>
          <h4>error</h4>
          <pre class="json error">{job.error}</pre>
        </>
      ) : null}
      {job.output !== undefined ? (
        <>
          <h4>output</h4>
          <pre class="json">{prettyJson(job.output)}</pre>
        </>
      ) : null}
      <h4>
        stream <span class="muted">({job.streamCount} chunk{job.streamCount === 1 ? "" : "s"})</span>
      </h4>
      {job.streamCount === 0 ? (
        <p class="muted">none</p>
      ) : (
        <ol class="chunks">
          {job.stream.map((c) => (
            <li>
              <pre class="json">{prettyJson(c, 10_000)}</pre>
            </li>
          ))}
        </ol>
      )}
      <h4>timeline</h4>
      {events === undefined ? null : events.ok ? <Timeline events={events.data.events} /> : <Unavailable what="Job timeline" reason={events.reason} />}
    </div>
  );
}

/**
 * What can be done to the job now, by the queue's rules (JobService): cancel a job not yet final,
 * retry a FAILED or TIMED_OUT one. Nothing for the others.
 */
function JobActions({ id, status }: { id: string; status: JobStatus }) {
  const cancel = !isFinal(status);
  const retry = status === "FAILED" || status === "TIMED_OUT";
  if (!cancel && !retry) return null;
  return (
    <span class="job-actions">
      {cancel ? (
        <button type="button" class="danger" data-job-action="cancel" data-job-id={id} title="POST /_emulator/jobs/{id}/cancel, as the queue's /cancel">
          cancel
        </button>
      ) : null}
      {retry ? (
        <button type="button" data-job-action="retry" data-job-id={id} title="POST /_emulator/jobs/{id}/retry, as the queue's /retry: back to the queue, same id and input">
          retry
        </button>
      ) : null}
    </span>
  );
}

function Fact({ k, children }: { k: string; children: Child }) {
  return (
    <div>
      <dt>{k}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function Timeline({ events }: { events: JobEvent[] }) {
  if (events.length === 0) return <p class="muted">no events recorded</p>;
  return (
    <ol class="timeline">
      {events.map((e) => (
        <li>
          <span class="mono at">{anyTime(e.at)}</span>
          {e.to ? <StatusBadge status={e.to} /> : <span class="badge s-deleted">deleted</span>}
          <span class="cause">{e.cause}</span>
        </li>
      ))}
    </ol>
  );
}
