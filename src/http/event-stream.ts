import type { Context } from "hono";
import { streamSSE, type SSEMessage, type SSEStreamingApi } from "hono/streaming";

/**
 * An event stream answer (Hono's `streamSSE`) less the `Connection: keep-alive` header it sets:
 * node's own then keeps the connection, or closes it once the stream ends when the request said
 * `Connection: close`, as it does for every other answer.
 */
export function eventStream(c: Context, write: (stream: SSEStreamingApi) => Promise<void>): Response {
  const res = streamSSE(c, write);
  res.headers.delete("connection");
  return res;
}

/** What feeds an event stream of the control API (the live feed, a load-balancing launcher). */
export interface EventSource {
  /**
   * Starts listening: `wake` when something waits to be written; `end` to close the stream, after
   * a last message if one is given (what waits is then dropped). Answers how to stop listening.
   */
  listen(wake: () => void, end: (last?: SSEMessage) => void): () => void;
  /** What waits to be written, in order; taking it empties it. */
  take(): SSEMessage[];
  /** The message sent every `tickMs` of wall time: a reader whose client gives up on a silent body stays connected. */
  tick(): SSEMessage;
  tickMs: number;
  /** Sent once, right after listening starts (so that nothing is missed while it is written). */
  first?: SSEMessage;
}

/**
 * Writes what `source` queues until it ends or the reader leaves. Listeners only queue and wake
 * the writer, so a burst of events costs what the source keeps of them, never a write each.
 */
export async function pumpEvents(stream: SSEStreamingApi, source: EventSource): Promise<void> {
  let wake: (() => void) | undefined;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  let closed = false;
  let ticked = false;
  let ended: { last?: SSEMessage | undefined } | undefined;
  const unlisten = source.listen(poke, (last) => {
    ended = { last };
    poke();
  });
  const timer = setInterval(() => {
    ticked = true;
    poke();
  }, source.tickMs);
  timer.unref?.();
  const stop = () => {
    if (closed) return;
    closed = true;
    unlisten();
    clearInterval(timer);
    poke();
  };
  stream.onAbort(stop);
  try {
    if (source.first) await stream.writeSSE(source.first);
    while (!closed) {
      const batch = ended ? [] : source.take();
      if (batch.length === 0 && !ticked && !ended) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (ended) {
        if (ended.last) await stream.writeSSE(ended.last);
        break;
      }
      for (const message of batch) await stream.writeSSE(message);
      if (ticked) {
        ticked = false;
        await stream.writeSSE(source.tick());
      }
    }
  } finally {
    stop();
  }
}
