/**
 * What the built-in OpenAI routes share: the request as a handler reads it, the model check, the
 * script a request may carry, and errors in the form vLLM answers them.
 */
import type { HandlerContext } from "../handlers/types.js";
import { errorOutput, isRecord, type ErrorOutput } from "./protocol.js";
import type { OpenAiSettings, ScriptedToolCall } from "./settings.js";
import { GENERATED_CHARS_PER_TOKEN, OPENAI_MAX_STOP, textCost, type LoopTime } from "./bounds.js";
import { generatedText, hashText, stopList } from "./text.js";

/** One request to a built-in route. */
export interface Turn {
  body: Record<string, unknown>;
  settings: OpenAiSettings;
  ctx: HandlerContext;
  /** The `echo` handler: the reply is the prompt (the last user message). */
  echo: boolean;
  /** Wall time and the event loop's turns, to let the loop turn while a long answer is made. */
  time: LoopTime;
}

/**
 * What a request may script besides the OpenAI fields, under `minipod` (extra body fields pass
 * through the OpenAI SDKs): a fixed `reply`, the `toolCalls` to make, `tokenDelayMs`.
 */
export interface Script {
  reply: string | undefined;
  toolCalls: ScriptedToolCall[] | undefined;
  tokenDelayMs: number | undefined;
}

export function scriptOf(body: Record<string, unknown>): Script {
  const s = isRecord(body.minipod) ? body.minipod : {};
  const calls = Array.isArray(s.toolCalls) ? s.toolCalls.filter((c): c is ScriptedToolCall => isRecord(c) && typeof c.name === "string") : undefined;
  return {
    reply: typeof s.reply === "string" ? s.reply : undefined,
    toolCalls: calls,
    tokenDelayMs: typeof s.tokenDelayMs === "number" && s.tokenDelayMs >= 0 ? s.tokenDelayMs : undefined,
  };
}

export { errorOutput, type ErrorOutput } from "./protocol.js";

/** The model a request names, if the endpoint serves it; no model means the first one. */
export function pickModel(body: Record<string, unknown>, settings: OpenAiSettings): string | ErrorOutput {
  if (body.model === undefined || body.model === null) return settings.models[0]!;
  if (typeof body.model !== "string") return errorOutput(400, "'model' must be a string", "model");
  if (!settings.models.includes(body.model)) return errorOutput(404, `The model \`${body.model}\` does not exist. This endpoint serves ${settings.models.join(", ")}.`, "model");
  return body.model;
}

/** A positive integer field (`n`, `max_tokens`), its default when absent. */
export function positiveInt(body: Record<string, unknown>, field: string, fallback: number | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined | ErrorOutput {
  const v = body[field];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) return errorOutput(400, `'${field}' must be an integer from 1 to ${max === Number.MAX_SAFE_INTEGER ? "any" : max}`, field);
  return v;
}

export const isErrorOutput = (v: unknown): v is ErrorOutput => isRecord(v) && isRecord(v.error);

/** The reply of a turn before limits: the script's or config's fixed reply, the prompt (echo), or generated words. */
export function replyText(turn: Turn, script: Script, prompt: string, seed: string | number): string {
  return script.reply ?? turn.settings.reply ?? (turn.echo ? prompt : generatedText(seed, turn.settings.replyTokens));
}

/** At most how many tokens and characters {@link replyText} gives once cut at `maxTokens`, without making it. */
export function replyCost(turn: Turn, script: Script, prompt: string, maxTokens: number | undefined): { tokens: number; chars: number } {
  const fixed = script.reply ?? turn.settings.reply ?? (turn.echo ? prompt : undefined);
  if (fixed !== undefined) return textCost(fixed, maxTokens);
  const tokens = Math.min(turn.settings.replyTokens, maxTokens ?? Infinity);
  return { tokens, chars: tokens * GENERATED_CHARS_PER_TOKEN };
}

/**
 * The seeds of a request's choices: the hash of `JSON.stringify([...parts, i])` for choice `i`,
 * the parts (a prompt, the messages) hashed once for all the choices.
 */
export function seedOf(parts: unknown[]): (i: number) => number {
  const text = JSON.stringify(parts);
  const prefix = hashText(text.slice(0, -1));
  return (i) => hashText(`${parts.length > 0 ? "," : ""}${i}]`, prefix);
}

/** `stop` of a request, at most {@link OPENAI_MAX_STOP} sequences. */
export function stopsOf(body: Record<string, unknown>): string[] | ErrorOutput {
  const stops = stopList(body.stop);
  if (stops.length > OPENAI_MAX_STOP) {
    return errorOutput(400, `Invalid 'stop': array too long. Expected an array with maximum length ${OPENAI_MAX_STOP}, but got an array with length ${stops.length} instead.`, "stop");
  }
  return stops;
}

/** Virtual ms before each token of this turn. */
export const tokenDelay = (turn: Turn, script: Script): number => script.tokenDelayMs ?? turn.settings.tokenDelayMs;

export async function pause(ctx: HandlerContext, ms: number): Promise<void> {
  if (ms > 0) await ctx.sleep(ms);
}

/** An id the same for the same job: `chatcmpl-<job id>`. */
export const responseId = (prefix: string, ctx: HandlerContext): string => `${prefix}-${ctx.jobId}`;

export const toolCallId = (ctx: HandlerContext, choice: number, i: number): string => `call_${hashText(`${ctx.jobId}:${choice}:${i}`).toString(16).padStart(8, "0")}`;

/** Unix seconds of the virtual clock, as `created` fields give them. */
export const unixNow = (ctx: HandlerContext): number => Math.floor(ctx.now() / 1000);
