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
    <table class="compact fit">
      <thead>
        <tr>
          <th class="w-time">at</th>
          <th class="w-id">job</th>
          <th>url</th>
          <th class="num w-try">try</th>
          <th class="w-answer">answer</th>
        </tr>
      </thead>
      <tbody>
        {latest(rows).map((d) => (
          <tr data-delivery={d.jobId}>
            <td class="mono">{anyTime(d.at)}</td>
            <td class="mono" title={d.jobId}>
              {shortId(d.jobId)}
            </td>
            <td title={d.url}>{d.url}</td>
            <td class="num">{d.attempt}</td>
            <td class={d.status !== undefined && d.status >= 200 && d.status < 300 ? "ok" : "bad"} title={d.error}>
              {d.status ?? d.error ?? "–"}
            </td>
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

/**
 * The request journal: every request the emulator answered, newest first; an error's detail shows
 * on its status. `workersHidden`: the route left the worker protocol's requests out.
 */
export function RequestsBody({ requests, workersHidden = false }: { requests: Fetched<{ requests: JournalEntry[]; count?: number }>; workersHidden?: boolean }) {
  if (!requests.ok) return <Unavailable what="Request journal" reason={requests.reason} />;
  const rows = requests.data.requests;
  const hidden = workersHidden ? " (worker traffic hidden)" : "";
  if (rows.length === 0) return <Empty>No requests match{hidden}.</Empty>;
  const count = requests.data.count ?? rows.length;
  return (
    <>
      <table class="compact fit">
        <thead>
          <tr>
            <th class="w-time">at</th>
            <th>request</th>
            <th class="w-op">operation</th>
            <th class="num w-status">status</th>
            <th class="num w-took">took</th>
          </tr>
        </thead>
        <tbody>
          {latest(rows).map((r) => {
            const where = [r.endpoint, r.operation].filter(Boolean).join(" · ");
            return (
              <tr data-request-status={String(r.status)} data-operation={r.operation}>
                <td class="mono">{anyTime(r.at)}</td>
                <td title={`${r.method} ${target(r)}`}>
                  <span class="method">{r.method}</span> {target(r)}
                </td>
                <td title={where || undefined}>{where}</td>
                <td class={`num ${r.status < 400 ? "ok" : "bad"}`} title={problemDetail(r.response)}>
                  {r.status}
                </td>
                <td class="num">{duration(r.durationMs)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p class="table-foot muted" data-count={String(count)}>
        {rows.length < count ? `newest ${rows.length} of ${count}` : `${count} request${count === 1 ? "" : "s"}`}
        {hidden}
      </p>
    </>
  );
}
