import type { ServerResponse } from "node:http";

/**
 * Answers of more than two pieces are written a piece at a time, a turn of the event loop each:
 * encoding and writing a 20 MB answer (a large output on `/status`, `/runsync`, a large input in
 * `job-take`) in one call held the loop for tens of milliseconds, every other request waiting.
 */
const PIECE = 512 * 1024;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** Where the piece from `at` ends: never between the two halves of a surrogate pair (each piece is encoded on its own). */
function pieceEnd(text: string, at: number): number {
  const end = Math.min(text.length, at + PIECE);
  return end < text.length && isHigh(text.charCodeAt(end - 1)) ? end - 1 : end;
}

/** A body for a web `Response`: the text itself when it is short, else a stream of its pieces. */
export function textBody(text: string): string | ReadableStream<Uint8Array> {
  if (text.length <= 2 * PIECE) return text;
  let at = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (at > 0) await new Promise((resolve) => setImmediate(resolve));
        const end = pieceEnd(text, at);
        controller.enqueue(Buffer.from(text.slice(at, end)));
        at = end;
        if (at >= text.length) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** `res.end(text)`, a piece a turn when it is long (its headers, Content-Length included, already set). */
export function endWith(res: ServerResponse, text: string): void {
  if (text.length <= 2 * PIECE) {
    res.end(text);
    return;
  }
  let at = 0;
  const next = (): void => {
    if (res.destroyed) return;
    const end = pieceEnd(text, at);
    const piece = text.slice(at, end);
    at = end;
    if (at >= text.length) {
      res.end(piece);
      return;
    }
    if (res.write(piece)) setImmediate(next);
    else res.once("drain", next);
  };
  next();
}
