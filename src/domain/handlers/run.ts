import type { Handler, HandlerContext } from "./types.js";

export type RunOutcome = { ok: true; output: unknown } | { ok: false; error: string };

const isAsyncIterable = (v: unknown): v is AsyncIterable<unknown> =>
  v !== null && typeof v === "object" && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function";

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  v !== null && (typeof v === "object" || typeof v === "function") && typeof (v as PromiseLike<unknown>).then === "function";

export const errorMessage = (e: unknown): string =>
  e instanceof Error ? e.message || e.name : typeof e === "string" ? e : JSON.stringify(e) ?? String(e);

/**
 * Calls a handler and runs it to its end. A generator's yields go to `onChunk` as they come; its
 * output is its return value or, when it returns nothing, the list of what it yielded. Never
 * throws. A handler that returns a plain value (or throws) has its outcome returned at once, not
 * a promise of it: most handlers in tests answer synchronously, and waiting two microtasks for
 * each of them was a measurable part of running a job.
 */
export function callHandler(
  fn: Handler,
  input: Record<string, unknown>,
  ctx: HandlerContext,
  onChunk: (output: unknown) => void,
): RunOutcome | Promise<RunOutcome> {
  let result: unknown;
  try {
    result = fn(input, ctx);
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
  if (isThenable(result) || isAsyncIterable(result)) return settle(result, ctx, onChunk);
  return outcomeOf(result);
}

async function settle(result: unknown, ctx: HandlerContext, onChunk: (output: unknown) => void): Promise<RunOutcome> {
  try {
    let output: unknown = await result;
    if (isAsyncIterable(output)) {
      const iterator = output[Symbol.asyncIterator]();
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
    return outcomeOf(output);
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
}

/** The output as stored: a JSON copy, so the handler keeps no hold on it. */
function outcomeOf(output: unknown): RunOutcome {
  if (output === undefined) return { ok: true, output };
  try {
    return { ok: true, output: JSON.parse(JSON.stringify(output)) as unknown };
  } catch (e) {
    return { ok: false, error: `handler output is not JSON-serialisable: ${errorMessage(e)}` };
  }
}
