import type { Handler, HandlerContext } from "./types.js";
import { jsonText, keptText, LARGE, RawJson } from "../json-text.js";
import { RUNSYNC_PAYLOAD_MAX_BYTES } from "../limits.js";
import { stringifyLarge } from "../json-slices.js";

export type RunOutcome = { ok: true; output: unknown } | { ok: false; error: string };

const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> =>
  v !== null && typeof v === "object" && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function";

export const errorMessage = (e: unknown): string =>
  e instanceof Error ? e.message || e.name : typeof e === "string" ? e : JSON.stringify(e) ?? String(e);

/**
 * Why an output is more than a worker may hand back, if it is: the worker routes take a result of
 * at most 20 MB (the service's library calls 20 MB the limit of a return body), so a handler
 * here gets no more, or a job that could never finish on the service would complete here.
 */
export function outputTooLarge(output: unknown): string | undefined {
  // A large value whose text was made keeps it (see keptText); one without is small (no second
  // JSON.stringify of every job's output for this check).
  const text = typeof output === "object" && output !== null ? keptText(output) : jsonText(output);
  if (text === undefined) return undefined;
  // A character is 1 to 3 bytes of UTF-8 (4 for a pair of 2): count the bytes only when it matters.
  if (text.length * 3 <= RUNSYNC_PAYLOAD_MAX_BYTES) return undefined;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= RUNSYNC_PAYLOAD_MAX_BYTES) return undefined;
  return `handler output is ${bytes} bytes of JSON, over the ${RUNSYNC_PAYLOAD_MAX_BYTES / 1024 / 1024} MB a worker's result may be: upload large results (s3Config) and return their URL`;
}

/**
 * Runs one handler call to its end. A generator's yields go to `chunks` as they come; its output
 * is its return value or, when it returns nothing, the list of what it yielded. Never throws.
 */
export async function runHandler(
  fn: Handler,
  input: Record<string, unknown> | Promise<Record<string, unknown>>,
  ctx: HandlerContext,
  /** Where a generator's yields go as they come. */
  chunks: { chunk(output: unknown): void },
  /** Waits for the next turn of the event loop, between slices of a large output. */
  pause: () => Promise<void>,
  /** The wall's time: a large output also pauses once a turn has taken its time (json-slices.ts). */
  now?: () => number,
  /**
   * `input` is the job's stored input itself (the handler only reads it: see `readingInputOnly`):
   * an output that is that very value needs no copy.
   */
  sharedInput = false,
): Promise<RunOutcome> {
  try {
    // A large input comes as it is being parsed, a slice at a time: the job may stop meanwhile.
    // (Only then is the signal read: reading it makes one, which costs every job.)
    let value: Record<string, unknown>;
    if (input instanceof Promise) {
      value = await input;
      if (ctx.signal.aborted) return { ok: false, error: errorMessage(ctx.signal.reason) };
    } else value = input;
    const result = await fn(value, ctx);
    let output: unknown = result;
    if (isAsyncIterable(result)) {
      const iterator = result[Symbol.asyncIterator]();
      const yielded: unknown[] = [];
      for (;;) {
        const step = await iterator.next();
        if (step.done) {
          output = step.value === undefined ? yielded : step.value;
          break;
        }
        if (ctx.signal.aborted) break;
        yielded.push(step.value);
        chunks.chunk(step.value);
      }
    }
    if (output !== undefined && !(sharedInput && output === value)) {
      try {
        // The job keeps a copy, never the handler's own value (which it may change later): a
        // large one as its text alone, which is all the job needs of it (it is written to SQLite
        // and into answers as text), sparing the event loop a parse of it.
        // A large one is written a slice at a time (json-slices.ts).
        const large = stringifyLarge(output, { pause, now });
        const text = typeof large === "string" || large === undefined ? large : await large;
        output = text === undefined ? undefined : text.length > LARGE ? new RawJson(text) : JSON.parse(text);
      } catch (e) {
        return { ok: false, error: `handler output is not JSON-serialisable: ${errorMessage(e)}` };
      }
      const tooLarge = outputTooLarge(output);
      if (tooLarge) return { ok: false, error: tooLarge };
    }
    return { ok: true, output };
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
}
