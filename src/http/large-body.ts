import type { ServerResponse } from "node:http";

/**
 * Answers of more than two pieces are written a piece at a time, a turn of the event loop each:
 * encoding and writing a 20 MB answer (a large output on `/status`, `/runsync`, a large input in
 * `job-take`) in one call held the loop for tens of milliseconds, every other request waiting.
 * An answer may come as consecutive texts (`stringifyBody`: a stored payload's parts among
 * them), which are never joined into one string.
 */
const PIECE = 512 * 1024;

/** An answer's text, whole or in consecutive pieces. */
export type Body = string | readonly string[];

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** Whether `body` is long enough to be written a piece at a time. */
export function isLarge(body: Body): boolean {
  if (typeof body === "string") return body.length > 2 * PIECE;
  let n = 0;
  for (const p of body) if ((n += p.length) > 2 * PIECE) return true;
  return false;
}

/** The pieces to write, none longer than PIECE, never splitting a surrogate pair (each is encoded on its own). */
function* piecesOf(body: Body): Generator<string> {
  for (const text of typeof body === "string" ? [body] : body) {
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + PIECE);
      if (end < text.length && isHigh(text.charCodeAt(end - 1))) end--;
      yield text.slice(at, end);
      at = end;
    }
  }
}

/** The body as one string (a short one). */
export const joined = (body: Body): string => (typeof body === "string" ? body : body.join(""));

/** A body for a web `Response`: the text itself when it is short, else a stream of its pieces. */
export function textBody(body: Body): string | ReadableStream<Uint8Array> {
  if (!isLarge(body)) return joined(body);
  const pieces = piecesOf(body);
  let first = true;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!first) await new Promise((resolve) => setImmediate(resolve));
        first = false;
        const next = pieces.next();
        if (next.done) controller.close();
        else controller.enqueue(Buffer.from(next.value));
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Answers `res` with `status`, `headers` and `body`: at once when it is short (with its Content-Length), else a piece a turn
 * (chunked: counting a 20 MB answer's bytes first would be one more pass over it).
 */
export function endWith(res: ServerResponse, status: number, headers: Record<string, string | number>, body: Body): void {
  if (!isLarge(body)) {
    const text = joined(body);
    headers["Content-Length"] = Buffer.byteLength(text);
    res.writeHead(status, headers);
    res.end(text);
    return;
  }
  res.writeHead(status, headers);
  const pieces = piecesOf(body);
  const next = (): void => {
    if (res.destroyed) return;
    const piece = pieces.next();
    if (piece.done) {
      res.end();
      return;
    }
    if (res.write(piece.value)) setImmediate(next);
    else res.once("drain", next);
  };
  next();
}
