import type { Activity, Release } from "../domain/activity.js";
import type { WallTime } from "../domain/wall.js";

/**
 * Wall ms a client may take nothing of an answer being written to it before that write stops
 * counting as real work: as long as node gives a client that stalls while sending its request
 * (its `requestTimeout`, 5 minutes) before answering it 408.
 */
export const STALLED_READER_MS = 300_000;

/**
 * `body` as the answer's writer takes it, a piece at a time: from the moment a piece is handed to
 * the writer until the writer asks for the next (it has gone to the socket), the write is pending
 * and counts as real work (see Activity), so the auto clock does not skip while minipod only waits
 * for a slow reader to take what it was sent; a reader that reads keeps a write pending a few
 * microtasks. A reader that takes nothing for `STALLED_READER_MS` of wall time stops holding the
 * clock: the answer then waits on the socket while virtual time goes on (and its time limits with
 * it). The writer asks for a piece only once the last was written (`highWaterMark` 0), so nothing
 * is read ahead of the socket.
 */
export function pendingWrites(body: ReadableStream<Uint8Array>, clock: { activity: Activity; wall: WallTime }): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let release: Release | undefined;
  let unstall: (() => void) | undefined;
  const written = () => {
    release?.();
    release = undefined;
    unstall?.();
    unstall = undefined;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        written();
        const next = await reader.read();
        if (next.done) return controller.close();
        controller.enqueue(next.value);
        release = clock.activity.working();
        unstall = clock.wall.after(STALLED_READER_MS, written);
      },
      cancel(reason) {
        written();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
