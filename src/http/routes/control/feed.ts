import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import type { SSEMessage } from "hono/streaming";
import { CLOSING_CAUSE, RESTARTING_CAUSE, type JobChange } from "../../../domain/notifier.js";
import type { WorkerStopped } from "../../../domain/worker-protocol.js";
import type { Core } from "../../core.js";
import { eventStream, pumpEvents } from "../../event-stream.js";
import type { AppEnv } from "../../env.js";
import { jobSummary } from "../../job-summary.js";
import { boolQuery } from "../../query-params.js";

const TAG = "Emulator control";
/** Changes waiting for a slow reader; past this the feed drops them and asks for a `resync`. */
export const FEED_BUFFER_MAX = 500;
/** Wall ms between `tick` events: they carry the clock and show a dead connection. */
export const FEED_TICK_MS = 5000;
/**
 * The feed watches this id, which no job can have (job ids have no slash), only to hear the
 * notifier's `releaseAll` (reset, restore, emulator closing): the feed then ends, so closing the
 * emulator is not held up by open dashboards, and browsers reconnect to a fresh state.
 */
const RELEASE_WATCH_ID = "/_emulator/feed";

const feedRoute = createRoute({
  method: "get",
  path: "/_emulator/feed",
  operationId: "feed",
  tags: [TAG],
  summary: "Live job changes (Server-Sent Events)",
  description: [
    "An `text/event-stream` of what happens to jobs, for live views such as the dashboard.",
    "",
    "- `ready`: sent once on connect, data `{now}` (virtual epoch ms).",
    "- `job`: data `{id, endpointId, from?, to?, cause, at, job?}`; `to` and `job` (a JobSummary) are absent when the job was deleted (ttl, retention, purge). Changes to one job that arrive faster than the reader takes them are merged into the latest.",
    `- \`resync\`: the reader fell more than ${FEED_BUFFER_MAX} jobs behind and changes were dropped; reload the list.`,
    '- `worker`: data `{endpointId, workerId, state: "stopped", reason}`: a worker process asked to be stopped after its job (`stopPod`, the library\'s `refresh_worker`); whoever runs it replaces it (`minipod worker` does).',
    `- \`tick\`: every ${FEED_TICK_MS / 1000} s of wall time, data \`{now, mode, speed}\` of the virtual clock.`,
    "",
    "The stream ends after a `resync` when the emulator resets, restores a snapshot or closes (then its data is `{\"closing\": true}`, with `\"restarting\": true` when it starts again on the same port at once: `minipod --watch` reloading its config); an EventSource reconnects by itself.",
    "",
    "`?jobs=false` leaves out the `job` events: what a watcher of the emulator's life needs (`minipod worker` stops its workers when the stream ends and minipod no longer answers).",
  ].join("\n"),
  request: { query: z.object({ jobs: boolQuery().openapi({ param: { name: "jobs", in: "query" }, description: "false: no `job` events" }) }) },
  responses: { 200: { description: "The event stream", content: { "text/event-stream": { schema: z.string() } } } },
});

/** One `job` event of the feed. */
export function feedEvent(change: JobChange) {
  return {
    id: change.id,
    endpointId: change.endpointId,
    ...(change.from !== undefined ? { from: change.from } : {}),
    ...(change.job ? { to: change.job.status } : {}),
    cause: change.cause,
    at: change.at,
    ...(change.job ? { job: jobSummary(change.job, change.at) } : {}),
  };
}

/**
 * `GET /_emulator/feed`. A listener only records the latest change per job and wakes the writer,
 * so a burst of thousands of changes costs one map entry each and a slow reader cannot make the
 * emulator buffer without bound.
 */
/** What the last `resync` says: closing, or closing to start again on the same port. */
const RESYNC_DATA: Record<string, string> = { [CLOSING_CAUSE]: '{"closing":true}', [RESTARTING_CAUSE]: '{"closing":true,"restarting":true}' };

export function feedControlRoutes(core: Pick<Core, "clock" | "notifier" | "workerProtocol">, router: OpenAPIHono<AppEnv>): void {
  const { clock, notifier } = core;
  router.openapi(feedRoute, (c) => {
    const withJobs = c.req.valid("query").jobs !== false;
    const pending = new Map<string, JobChange>();
    const workerEvents: WorkerStopped[] = [];
    let overflow = false;
    return eventStream(c, (stream) =>
      pumpEvents(stream, {
        listen(wake, end) {
          const onChange = (change: JobChange) => {
            if (overflow) return;
            pending.delete(change.id); // re-insert so the map keeps changes in the order they last happened
            pending.set(change.id, change);
            if (pending.size > FEED_BUFFER_MAX) {
              pending.clear();
              overflow = true;
            }
            wake();
          };
          const unsubscribe = withJobs ? notifier.onAny(onChange) : () => {};
          const unlisten = core.workerProtocol.onWorkerStopped((e) => {
            if (workerEvents.length < FEED_BUFFER_MAX) workerEvents.push(e);
            wake();
          });
          const unwatch = notifier.watch(RELEASE_WATCH_ID, (change) => end({ event: "resync", data: RESYNC_DATA[change.cause] ?? "{}" }));
          return () => {
            unsubscribe();
            unlisten();
            unwatch();
          };
        },
        take() {
          const out: SSEMessage[] = overflow ? [{ event: "resync", data: "{}" }] : [];
          overflow = false;
          for (const change of pending.values()) out.push({ event: "job", data: JSON.stringify(feedEvent(change)) });
          pending.clear();
          for (const e of workerEvents.splice(0)) out.push({ event: "worker", data: JSON.stringify({ ...e, state: "stopped" }) });
          return out;
        },
        tick: () => ({ event: "tick", data: JSON.stringify({ now: clock.now(), mode: clock.mode, speed: clock.speed }) }),
        tickMs: FEED_TICK_MS,
        first: { event: "ready", data: JSON.stringify({ now: clock.now() }), retry: 2000 },
      }),
    );
  });
}
