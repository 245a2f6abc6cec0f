import type { BatchOverview, Fetched } from "../data.js";
import { Empty, StatusBadge, Time, Unavailable } from "../components.js";
import { shortId } from "../format.js";

/**
 * The newest batches: each one's state and progress (`completed / total`, failed, running), and
 * its first requests with their status and error, folded under the batch.
 */
export function BatchesBody({ batches }: { batches: Fetched<{ batches: BatchOverview[] }> }) {
  if (!batches.ok) return <Unavailable what="Batches" reason={batches.reason} />;
  const list = batches.data.batches;
  if (list.length === 0) return <Empty>{"No batches. Create one with POST /v2/{endpoint_id}/batch."}</Empty>;
  return (
    <ul class="batches">
      {list.map((b) => {
        const ended = b.endedAt !== undefined;
        const done = b.requestCompleted + b.requestFailed;
        return (
          <li data-batch={b.id} data-status={b.status}>
            <details>
              <summary>
                <span class="mono" title={b.id}>
                  {b.name ?? shortId(b.id)}
                </span>{" "}
                <span class="muted">{b.endpointId}</span> <StatusBadge status={b.status} />{" "}
                <progress max={Math.max(1, b.requestTotal)} value={done} title={`${done} of ${b.requestTotal} done`}></progress>{" "}
                <span class="num">
                  {b.requestCompleted} / {b.requestTotal} completed
                </span>
                {b.requestFailed > 0 ? <span class="s-failed"> · {b.requestFailed} failed</span> : null}
                {b.requestInProgress > 0 ? <span> · {b.requestInProgress} running</span> : null}
                {b.cancelRequested && !ended ? <span class="muted"> · cancelling</span> : null}
                {ended ? (
                  <span class="muted">
                    {" "}
                    · ended <Time ms={b.endedAt} />
                  </span>
                ) : null}
                {b.error ? <span class="s-failed"> · {b.error}</span> : null}
              </summary>
              <table class="fit">
                <thead>
                  <tr>
                    <th class="w-id">request</th>
                    <th class="w-status-badge">status</th>
                    <th>error</th>
                  </tr>
                </thead>
                <tbody>
                  {b.requests.map((r) => (
                    <tr data-job={r.status === "PENDING" ? undefined : r.id} data-status={r.status}>
                      <td class="mono" title={r.id}>
                        {r.id}
                      </td>
                      <td>
                        <StatusBadge status={r.status} />
                      </td>
                      <td>{r.error ?? ""}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {b.requests.length < b.requestTotal ? <p class="muted">{`the first ${b.requests.length} of ${b.requestTotal}; all of them: GET /v2/${b.endpointId}/batch/${b.id}/requests`}</p> : null}
            </details>
          </li>
        );
      })}
    </ul>
  );
}
