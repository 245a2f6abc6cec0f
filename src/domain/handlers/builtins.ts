import type { LoopTime } from "../openai/bounds.js";
import { pause } from "../openai/common.js";
import { isOpenAiInput, isRecord } from "../openai/protocol.js";
import { OPENAI_DEFAULTS, type OpenAiSettingsOf } from "../openai/settings.js";
import { answerOpenAi, openAiHandler } from "./openai.js";
import { readingInputOnly, type Handler, type HandlerContext } from "./types.js";

/**
 * `echo`: the output is the input. An OpenAI request (`{openai_route, openai_input}`) is answered
 * as `openai` answers it, with the prompt (the last user message) as the reply. It only reads its
 * input (`readingInputOnly`): it is given the stored input itself, and keeps no copy of it.
 */
export const echo = (settingsOf: OpenAiSettingsOf, time: LoopTime): Handler =>
  readingInputOnly((input, ctx) => (isOpenAiInput(input) ? answerOpenAi(input, ctx, settingsOf, time, true) : input));

/**
 * `scripted`: the input says what happens. `sleepMs` (virtual ms of work), `fail` (the job ends
 * FAILED with this error), `failAttempts` (only the first N attempts fail, so a retry succeeds),
 * `stream` (each element is one stream chunk, `streamIntervalMs` apart) and `output` (what to
 * return; default: the input). An OpenAI request carries the same keys in its body's `minipod`
 * object; with none of `output`, `stream`, `fail` or `failAttempts` there, it is answered as
 * `openai` answers it, after `sleepMs`.
 */
export const scripted =
  (settingsOf: OpenAiSettingsOf, time: LoopTime): Handler =>
  (input, ctx) => {
    if (!isOpenAiInput(input)) return runScript(input, ctx, input);
    const script = isRecord(input.openai_input.minipod) ? input.openai_input.minipod : {};
    if ("output" in script || Array.isArray(script.stream) || typeof script.failAttempts === "number" || (script.fail !== undefined && script.fail !== false && script.fail !== null))
      return runScript(script, ctx, undefined);
    // A promise of the answer, a generator when streamed: runHandler iterates what it resolves to.
    return (async () => {
      await pause(ctx, typeof script.sleepMs === "number" ? script.sleepMs : 0);
      return answerOpenAi(input, ctx, settingsOf, time, false);
    })();
  };

function runScript(script: Record<string, unknown>, ctx: HandlerContext, fallback: unknown): unknown {
  const sleepMs = typeof script.sleepMs === "number" && script.sleepMs > 0 ? script.sleepMs : 0;
  const failAttempts = typeof script.failAttempts === "number" ? script.failAttempts : undefined;
  const fail = failAttempts === undefined ? script.fail : ctx.attempt <= failAttempts ? (script.fail ?? `attempt ${ctx.attempt} failed on purpose (failAttempts: ${failAttempts})`) : undefined;
  const output = "output" in script ? script.output : fallback;
  const stream = Array.isArray(script.stream) ? (script.stream as unknown[]) : undefined;
  const interval = typeof script.streamIntervalMs === "number" && script.streamIntervalMs > 0 ? script.streamIntervalMs : 0;
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
}

/** The built-in handlers by name; `settingsOf` gives each endpoint's `openai` settings, `time` the wall the OpenAI answers pace themselves by. */
export function builtinHandlers(time: LoopTime, settingsOf: OpenAiSettingsOf = () => OPENAI_DEFAULTS): Readonly<Record<string, Handler>> {
  return { echo: echo(settingsOf, time), scripted: scripted(settingsOf, time), openai: openAiHandler(settingsOf, time) };
}
