import type { Handler, HandlerContext } from "./types.js";
import { jsonCopy } from "../json-text.js";

export type RunOutcome = { ok: true; output: unknown } | { ok: false; error: string };

const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> =>
  v !== null && typeof v === "object" && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function";

export const errorMessage = (e: unknown): string =>
  e instanceof Error ? e.message || e.name : typeof e === "string" ? e : JSON.stringify(e) ?? String(e);

/**
 * Runs one handler call to its end. A generator's yields go to `onChunk` as they come; its output
 * is its return value or, when it returns nothing, the list of what it yielded. Never throws.
 */
export async function runHandler(
  fn: Handler,
  input: Record<string, unknown>,
  ctx: HandlerContext,
  onChunk: (output: unknown) => void,
): Promise<RunOutcome> {
  try {
    const result = await fn(input, ctx);
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
        onChunk(step.value);
      }
    }
    if (output !== undefined) {
      try {
        output = jsonCopy(output);
      } catch (e) {
        return { ok: false, error: `handler output is not JSON-serialisable: ${errorMessage(e)}` };
      }
    }
    return { ok: true, output };
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
}
