import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { eventStream } from "../../http/event-stream.js";
import { LOG_LINES_KEPT, type LogLine } from "../../domain/logbook.js";
import type { JobNotifier } from "../../domain/notifier.js";
import { intQuery } from "../../http/schemas.js";

/** Logs as the v2 surface streams them (`/v2/pods/{id}/logs`, `/v2/serverless/{id}/workers/{workerId}/logs`). */

const TAIL_DEFAULT = 100;

export const LogQuery = z.object({
  source: z.enum(["container", "system"]).optional().openapi({ param: { name: "source", in: "query" }, description: "Only this source; default both" }),
  tail: intQuery()
    .pipe(z.int().min(0).max(LOG_LINES_KEPT))
    .optional()
    .openapi({ param: { name: "tail", in: "query" }, description: `Lines to backfill before streaming (default ${TAIL_DEFAULT}, 0 for none); ignored with since or Last-Event-ID` }),
  since: z.iso.datetime({ offset: true }).optional().openapi({ param: { name: "since", in: "query" }, description: "RFC 3339 time to resume from (virtual time); ignored with Last-Event-ID" }),
});
export type LogQuery = z.output<typeof LogQuery>;

export const LOG_STREAM_DESCRIPTION =
  "Server-Sent Events: each event's `data` is `{source, line, ts}` (`ts`: virtual time, RFC 3339) and its `id` is `ts`, so an EventSource resumes with `Last-Event-ID` (read from the header; it wins over `since` and `tail`). The backfill comes first, then new lines as they happen; the stream ends when the pod or worker is gone or the emulator resets.";

export const logStreamResponse = (description: string) => ({
  description,
  headers: z.object({ "Cache-Control": z.string(), "X-Accel-Buffering": z.string() }),
  content: { "text/event-stream": { schema: z.string() } },
});

/**
 * The notifier tells this id, which no job has, when everything is released (reset, snapshot
 * restore, emulator closing): open log streams end then, so closing is not held up.
 */
const RELEASE_WATCH_ID = "/v2/logs";

/** The lines a query asks for: after the cursor, or the last `tail`, of the source asked for. */
function backfill(lines: readonly LogLine[], q: LogQuery, lastEventId: string | undefined): LogLine[] {
  const of = q.source ? lines.filter((l) => l.source === q.source) : [...lines];
  const resumeAt = lastEventId === undefined ? Number.NaN : Date.parse(lastEventId);
  if (!Number.isNaN(resumeAt)) return of.filter((l) => l.at > resumeAt);
  if (q.since !== undefined) {
    const since = Date.parse(q.since);
    return of.filter((l) => l.at >= since);
  }
  const tail = q.tail ?? TAIL_DEFAULT;
  return tail === 0 ? [] : of.slice(-tail);
}

/**
 * Streams a log: its backfill, then each new line until it ends (`subscribe` hears `undefined`),
 * the client goes, or everything is released.
 */
export function logStream(
  c: Context,
  notifier: JobNotifier,
  log: { lines: () => readonly LogLine[]; ended: boolean; subscribe: (fn: (line: LogLine | undefined) => void) => () => void },
  q: LogQuery,
): Response {
  c.header("X-Accel-Buffering", "no");
  return eventStream(c, async (stream) => {
    const pending: LogLine[] = [];
    let done = log.ended;
    let wake: (() => void) | undefined;
    const poke = () => {
      wake?.();
      wake = undefined;
    };
    const unsubscribe = log.subscribe((line) => {
      if (line === undefined) done = true;
      else if (!q.source || line.source === q.source) pending.push(line);
      poke();
    });
    const unwatch = notifier.watch(RELEASE_WATCH_ID, () => {
      done = true;
      poke();
    });
    stream.onAbort(() => {
      done = true;
      poke();
    });
    const write = (l: LogLine) => {
      const ts = new Date(l.at).toISOString();
      return stream.writeSSE({ id: ts, data: JSON.stringify({ source: l.source, line: l.line, ts }) });
    };
    try {
      // Read after subscribing, in the same turn: no line is missed or sent twice.
      for (const l of backfill(log.lines(), q, c.req.header("last-event-id"))) await write(l);
      for (;;) {
        while (pending.length) await write(pending.shift()!);
        if (done) break;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      unsubscribe();
      unwatch();
    }
  });
}
