import type { JobSummaryView } from "../../job-summary.js";
import { Empty, StatusBadge, Time } from "../components.js";
import { duration, shortId } from "../format.js";

export interface JobPage {
  jobs: JobSummaryView[];
  count: number;
  limit: number;
  offset: number;
}

/** The newest jobs as a table; a row opens the job's detail. */
export function JobsBody({ page }: { page: JobPage }) {
  const { jobs, count, limit, offset } = page;
  if (count === 0) return <Empty>{"No jobs match. Submit one with the form above or POST /v2/{endpoint_id}/run."}</Empty>;
  return (
    <>
      <table class="jobs-table fit">
        <thead>
          <tr>
            <th class="w-id">job</th>
            <th>endpoint</th>
            <th class="w-status-badge">status</th>
            <th class="w-time">submitted</th>
            <th class="num w-duration" title="delayTime: from submission to the start">
              delay
            </th>
            <th class="num w-duration" title="executionTime: from the start to the end">
              run
            </th>
            <th class="w-worker">worker</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((j) => (
            <tr data-job={j.id} data-status={j.status} tabindex={0}>
              <td class="mono" title={j.id}>
                {shortId(j.id)}
                {j.retries > 0 ? <span class="retries" title="retries"> ↻{j.retries}</span> : null}
              </td>
              <td title={j.endpointId}>{j.endpointId}</td>
              <td>
                <StatusBadge status={j.status} />
              </td>
              <td>
                <Time ms={j.createdAt} />
              </td>
              <td class="num">{duration(j.delayTime)}</td>
              <td class="num">{duration(j.executionTime)}</td>
              <td class="mono" title={j.workerId}>
                {j.workerId ?? <span class="muted">–</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="pager">
        <span class="muted">
          {offset + 1}–{offset + jobs.length} of {count}
        </span>
        <button type="button" data-offset={String(Math.max(0, offset - limit))} disabled={offset === 0}>
          newer
        </button>
        <button type="button" data-offset={String(offset + limit)} disabled={offset + jobs.length >= count}>
          older
        </button>
      </div>
    </>
  );
}
