import type { Fetched, JournalEntry, WebhookDelivery } from "../data.js";
import { Empty, Unavailable } from "../components.js";
import { anyTime, duration, shortId } from "../format.js";

/** Panels show the latest entries only; the routes hold the full lists. */
export const JOURNAL_ROWS_MAX = 100;

const timeOf = (at: number | string): number => (typeof at === "number" ? at : Date.parse(at));

/** Newest first, whichever order the route lists them in (entries at one virtual ms keep theirs). */
function latest<T extends { at: number | string }>(rows: T[]): T[] {
  const newestFirst = rows.length > 1 && timeOf(rows[0]!.at) > timeOf(rows[rows.length - 1]!.at);
  return (newestFirst ? rows.slice(0, JOURNAL_ROWS_MAX) : rows.slice(-JOURNAL_ROWS_MAX).reverse());
}

/** Webhook calls the emulator made, newest first, with each attempt's answer. */
export function WebhooksBody({ webhooks }: { webhooks: Fetched<{ deliveries: WebhookDelivery[]; count?: number }> }) {
  if (!webhooks.ok) return <Unavailable what="Webhook deliveries" reason={webhooks.reason} />;
  const rows = webhooks.data.deliveries;
  if (rows.length === 0) return <Empty>No webhook calls yet. Submit a job with a "webhook" URL.</Empty>;
  return (
    <table class="compact">
      <thead>
        <tr>
          <th>at</th>
          <th>job</th>
          <th>url</th>
          <th class="num">try</th>
          <th>answer</th>
        </tr>
      </thead>
      <tbody>
        {latest(rows).map((d) => (
          <tr data-delivery={d.jobId}>
            <td class="mono">{anyTime(d.at)}</td>
            <td class="mono" title={d.jobId}>
              {shortId(d.jobId)}
            </td>
            <td class="url" title={d.url}>
              {d.url}
            </td>
            <td class="num">{d.attempt}</td>
            <td class={d.status !== undefined && d.status >= 200 && d.status < 300 ? "ok" : "bad"}>{d.status ?? d.error ?? "–"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The path with its query string. */
const target = (r: JournalEntry): string => (r.query === undefined ? r.path : `${r.path}?${r.query}`);

/** What an error answer said, for the status cell's tooltip. */
function problemDetail(response: unknown): string | undefined {
  if (typeof response === "string") return response;
  const detail = (response as { detail?: unknown } | undefined)?.detail;
  return typeof detail === "string" ? detail : undefined;
}

/** The request journal: every request the emulator answered, newest first; an error's detail shows on its status. */
export function RequestsBody({ requests }: { requests: Fetched<{ requests: JournalEntry[]; count?: number }> }) {
  if (!requests.ok) return <Unavailable what="Request journal" reason={requests.reason} />;
  const rows = requests.data.requests;
  if (rows.length === 0) return <Empty>No requests match.</Empty>;
  return (
    <table class="compact">
      <thead>
        <tr>
          <th>at</th>
          <th>request</th>
          <th>operation</th>
          <th class="num">status</th>
          <th class="num">took</th>
        </tr>
      </thead>
      <tbody>
        {latest(rows).map((r) => (
          <tr data-request-status={String(r.status)}>
            <td class="mono">{anyTime(r.at)}</td>
            <td class="url" title={target(r)}>
              <span class="method">{r.method}</span> {target(r)}
            </td>
            <td>{[r.endpoint, r.operation].filter(Boolean).join(" · ")}</td>
            <td class={`num ${r.status < 400 ? "ok" : "bad"}`} title={problemDetail(r.response)}>
              {r.status}
            </td>
            <td class="num">{duration(r.durationMs)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
