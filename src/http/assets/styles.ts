/** The dashboard's stylesheet: system fonts only (no web fonts to fetch), light and dark. */
export const DASHBOARD_CSS = String.raw`
:root {
  --bg: #f5f6f8; --card: #fff; --fg: #1d2330; --muted: #6b7385; --line: #e3e6ec; --accent: #4f46e5;
  --queue: #b45309; --queue-bg: #fef3c7; --run: #1d4ed8; --run-bg: #dbeafe; --ok: #047857; --ok-bg: #d1fae5;
  --bad: #b91c1c; --bad-bg: #fee2e2; --gray-bg: #eceef2; --timeout: #7c2d12; --timeout-bg: #ffedd5;
  --mono: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f1218; --card: #171b24; --fg: #e6e9ef; --muted: #8b93a7; --line: #2a3040; --accent: #818cf8;
    --queue: #fbbf24; --queue-bg: #3b2c0a; --run: #93c5fd; --run-bg: #172554; --ok: #6ee7b7; --ok-bg: #073b2c;
    --bad: #fca5a5; --bad-bg: #450a0a; --gray-bg: #262b36; --timeout: #fdba74; --timeout-bg: #431407;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.top { display: flex; align-items: center; gap: 20px; padding: 10px 20px; background: var(--card); border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 2; }
.top h1 { font-size: 17px; margin: 0; display: flex; align-items: center; gap: 8px; letter-spacing: .2px; }
.logo { width: 14px; height: 14px; border-radius: 4px; background: linear-gradient(135deg, var(--accent), #06b6d4); transform: rotate(45deg); display: inline-block; }
.version { color: var(--muted); font-weight: 400; font-size: 12px; }
.top nav { display: flex; gap: 14px; }
.live { margin-left: auto; font-size: 12px; color: var(--muted); display: flex; align-items: center; gap: 6px; }
.live::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: var(--muted); }
.live[data-state="on"]::before { background: #10b981; box-shadow: 0 0 0 3px color-mix(in srgb, #10b981 25%, transparent); }
.live[data-state="retry"]::before { background: #f59e0b; }
main { padding: 16px 20px 8px; display: grid; gap: 16px; max-width: 1500px; margin: 0 auto; }
.split { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 16px; align-items: start; }
.split.even { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
@media (max-width: 1000px) { .split, .split.even { grid-template-columns: minmax(0, 1fr); } }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px 14px; min-width: 0; }
.card-head { display: flex; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 10px; }
.card-head h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .6px; color: var(--muted); margin: 0; font-weight: 600; }
.tools { margin-left: auto; display: flex; gap: 6px; flex-wrap: wrap; align-items: center; }
button, select, input, textarea { font: inherit; font-size: 13px; color: var(--fg); background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
button { cursor: pointer; }
button:hover:not(:disabled) { border-color: var(--accent); color: var(--accent); }
button:disabled { opacity: .45; cursor: default; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.primary:hover:not(:disabled) { color: #fff; filter: brightness(1.08); }
button.link { border: 0; background: none; color: var(--bad); padding: 0 4px; }
button.danger { color: var(--bad); }
button.danger:hover:not(:disabled) { border-color: var(--bad); color: var(--bad); }
.busy button[data-advance], .busy button[data-action="run-until-idle"] { opacity: .45; pointer-events: none; }
.muted, .empty { color: var(--muted); }
.empty, .unavailable { margin: 4px 0; }
.unavailable { color: var(--muted); font-style: italic; }
.mono, code, pre, time { font-family: var(--mono); font-size: 12.5px; }
.clock-body { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
#clock-now { font-size: 26px; font-weight: 600; letter-spacing: .5px; }
#clock-now .clock-date { color: var(--muted); font-weight: 400; font-size: 18px; }
.mode { font-size: 12px; padding: 1px 8px; border-radius: 999px; background: var(--gray-bg); }
.mode-manual { background: var(--queue-bg); color: var(--queue); }
.mode-auto { background: var(--run-bg); color: var(--run); }
.endpoints { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 12px; }
.endpoint { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
/* The id comes first and whole: the name gives way, and goes to a line of its own when the card is
   narrow; only an id wider than its card is cut (its title holds it). */
.endpoint header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 8px; min-width: 0; }
.endpoint h3 { margin: 0; font-size: 15px; flex: 0 1 auto; max-width: 100%; }
.endpoint-name { flex: 1 1 8em; }
.endpoint h3, .endpoint-name { min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.endpoint h3 a { color: inherit; }
.endpoint.selected { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
.endpoint .handler { margin-left: auto; color: var(--muted); font-size: 11.5px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 50%; }
.counts { display: grid; grid-template-columns: repeat(4, 1fr); margin: 8px 0; gap: 4px; }
.counts div { text-align: center; }
.counts dt { font-size: 11px; color: var(--muted); }
.counts dd { margin: 0; font-size: 18px; font-weight: 600; font-variant-numeric: tabular-nums; }
.counts .count-queue dd { color: var(--queue); }
.workers { display: flex; flex-wrap: wrap; gap: 4px; min-height: 22px; }
.worker { font-size: 11px; padding: 1px 7px; border-radius: 5px; border: 1px solid; font-family: var(--mono); }
.w-idle { color: var(--ok); border-color: var(--ok); background: var(--ok-bg); }
.w-running { color: var(--run); border-color: var(--run); background: var(--run-bg); }
.w-initializing { color: var(--queue); border-color: var(--queue); background: repeating-linear-gradient(45deg, var(--queue-bg) 0 5px, transparent 5px 10px); }
.w-unhealthy, .w-lost { color: var(--bad); border-color: var(--bad); background: var(--bad-bg); }
.w-stopped { color: var(--muted); border-color: var(--line); background: var(--gray-bg); }
.ext-workers { list-style: none; margin: 0; padding: 0; font-size: 12px; display: grid; gap: 3px; }
.ext-workers li { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.settings { font-size: 12px; margin: 8px 0 0; }
.resource-fields { font-size: 12px; margin: 6px 0 0; }
.resource-fields summary { cursor: pointer; color: var(--muted); }
.resource-fields dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 4px 0 0; }
.resource-fields dl > div { display: contents; }
.resource-fields dt { color: var(--muted); }
.resource-fields dd { margin: 0; overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; }
/* Fixed columns: a long id, URL or endpoint name is cut (its cell's title holds it whole) instead of widening the page. */
table.fit { table-layout: fixed; }
table.fit td, table.fit th { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.w-id { width: 150px; } .w-time { width: 118px; } .w-status-badge { width: 110px; } .w-duration { width: 84px; }
.w-try { width: 48px; } .w-answer { width: 100px; } .w-op { width: 30%; } .w-status { width: 72px; } .w-took { width: 74px; }
.w-when { width: 22%; } .w-fired { width: 60px; } .w-remove { width: 80px; }
.jobs-table .w-id { width: 13%; } .jobs-table .w-status-badge { width: 13%; } .jobs-table .w-time { width: 16%; } .jobs-table .w-duration { width: 11%; } .jobs-table .w-worker { width: 19%; }
.table-foot { font-size: 12px; margin: 6px 0 0; text-align: right; }
th { text-align: left; font-size: 11px; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: .4px; padding: 4px 8px; border-bottom: 1px solid var(--line); }
td { padding: 5px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.jobs-table tbody tr { cursor: pointer; }
.jobs-table tbody tr:hover, .jobs-table tbody tr:focus { background: var(--gray-bg); outline: none; }
.jobs-table tbody tr.selected { background: color-mix(in srgb, var(--accent) 12%, transparent); }
.retries { color: var(--muted); }
.ok { color: var(--ok); } .bad { color: var(--bad); }
.method { font-weight: 600; font-family: var(--mono); font-size: 12px; }
.badge { display: inline-block; font-size: 11.5px; padding: 1px 8px; border-radius: 999px; font-weight: 500; background: var(--gray-bg); color: var(--muted); white-space: nowrap; }
.s-in-queue { background: var(--queue-bg); color: var(--queue); }
.s-in-progress { background: var(--run-bg); color: var(--run); }
.s-completed { background: var(--ok-bg); color: var(--ok); }
.s-failed { background: var(--bad-bg); color: var(--bad); }
.s-timed-out { background: var(--timeout-bg); color: var(--timeout); }
.pager { display: flex; gap: 8px; align-items: center; justify-content: flex-end; margin-top: 8px; }
.pager .muted { margin-right: auto; font-size: 12px; }
.detail-head { display: flex; align-items: center; gap: 8px 10px; flex-wrap: wrap; }
.job-id { font-size: 12.5px; word-break: break-all; flex: 1 1 12em; min-width: 0; }
.job-actions { display: flex; gap: 6px; }
.facts { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 6px 16px; margin: 10px 0; }
.facts dt { font-size: 11px; color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.detail h4 { margin: 12px 0 4px; font-size: 12px; text-transform: uppercase; letter-spacing: .4px; color: var(--muted); }
pre.json { margin: 0; padding: 8px 10px; background: var(--bg); border: 1px solid var(--line); border-radius: 6px; max-height: 260px; overflow: auto; white-space: pre-wrap; word-break: break-word; }
pre.error { color: var(--bad); background: var(--bad-bg); }
.chunks { margin: 0; padding-left: 22px; display: grid; gap: 4px; }
.timeline { list-style: none; margin: 0; padding: 0 0 0 10px; border-left: 2px solid var(--line); display: grid; gap: 6px; }
.timeline li { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; position: relative; }
.timeline li::before { content: ""; position: absolute; left: -15px; top: 6px; width: 8px; height: 8px; border-radius: 50%; background: var(--accent); }
.timeline .at { color: var(--muted); }
.timeline .cause { min-width: 0; overflow-wrap: anywhere; }
.filter { display: flex; gap: 6px; flex-wrap: wrap; align-items: center; }
.filter select { max-width: 14em; }
.check { display: flex; align-items: center; gap: 4px; font-size: 12px; color: var(--muted); white-space: nowrap; cursor: pointer; }
.check input { margin: 0; padding: 0; }
.submit-form { display: grid; grid-template-columns: minmax(0, 12em) minmax(0, 1fr) auto; gap: 4px 10px; align-items: end; padding-bottom: 10px; margin-bottom: 10px; border-bottom: 1px dashed var(--line); }
.submit-form label { display: grid; gap: 2px; font-size: 11px; color: var(--muted); min-width: 0; }
.submit-form select { width: 100%; }
.submit-form textarea { width: 100%; min-height: 31px; resize: vertical; font-family: var(--mono); font-size: 12.5px; }
.submit-form textarea[aria-invalid="true"] { border-color: var(--bad); outline-color: var(--bad); }
.form-error { grid-column: 1 / -1; margin: 0; color: var(--bad); font-size: 12.5px; overflow-wrap: anywhere; }
.fault-form { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; padding-bottom: 12px; margin-bottom: 10px; border-bottom: 1px dashed var(--line); }
.fault-form label { display: grid; gap: 2px; font-size: 11px; color: var(--muted); }
.fault-form input { width: 110px; }
.fault-form:not([data-type="http"]) .for-http, .fault-form:not([data-type="latency"]) .for-latency { display: none; }
.actions { text-align: right; }
tr.spent td { opacity: .55; }
.toast { position: fixed; right: 20px; bottom: 20px; margin: 0; max-width: 420px; padding: 10px 14px; border-radius: 8px; background: var(--fg); color: var(--bg); box-shadow: 0 6px 24px rgba(0,0,0,.2); z-index: 3; }
.toast.error { background: var(--bad); color: #fff; }
footer { text-align: center; color: var(--muted); font-size: 12px; padding: 8px 20px 20px; }
`;
