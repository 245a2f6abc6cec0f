import type { Handler } from "./types.js";

/** `echo`: the output is the input. */
export const echo: Handler = (input) => input;

/**
 * `scripted`: the input says what happens. `sleepMs` (virtual ms of work), `fail` (the job ends
 * FAILED with this error), `failAttempts` (only the first N attempts fail, so a retry succeeds),
 * `stream` (each element is one stream chunk, `streamIntervalMs` apart) and `output` (what to
 * return; default: the input).
 */
export const scripted: Handler = (input, ctx) => {
  const sleepMs = typeof input.sleepMs === "number" && input.sleepMs > 0 ? input.sleepMs : 0;
  const failAttempts = typeof input.failAttempts === "number" ? input.failAttempts : undefined;
  const fail = failAttempts === undefined ? input.fail : ctx.attempt <= failAttempts ? (input.fail ?? `attempt ${ctx.attempt} failed on purpose (failAttempts: ${failAttempts})`) : undefined;
  const output = "output" in input ? input.output : input;
  const stream = Array.isArray(input.stream) ? (input.stream as unknown[]) : undefined;
  const interval = typeof input.streamIntervalMs === "number" && input.streamIntervalMs > 0 ? input.streamIntervalMs : 0;
  const finish = () => {
    if (fail !== undefined && fail !== false && fail !== null) {
      throw new Error(typeof fail === "string" ? fail : JSON.stringify(fail));
    }
    return output;
  };
  if (!stream) {
    return (async () => {
      if (sleepMs) await ctx.sleep(sleepMs);
      return finish();
    })();
  }
  return (async function* () {
    if (sleepMs) await ctx.sleep(sleepMs);
    for (let i = 0; i < stream.length; i++) {
      if (i > 0 && interval) await ctx.sleep(interval);
      yield stream[i];
    }
    return finish();
  })();
};

export const BUILTIN_HANDLERS: Readonly<Record<string, Handler>> = { echo, scripted };
