/**
 * What one request to the built-in OpenAI handlers may cost, checked before anything is generated:
 * the prompts' tokens against the model's context length (refused with vLLM's words), and what
 * the answer would hold in all (minipod's own bounds, so that no request of the 20 MB a route
 * takes can exhaust memory, pass the 20 MB a result may be, or hold the event loop).
 */
import { errorOutput, type ErrorOutput } from "./protocol.js";
import type { Wall } from "../wall.js";

/** Inputs of one embeddings request and prompts of one completions request: OpenAI's limit on inputs. */
export const OPENAI_MAX_INPUTS = 2048;
/** Prompt tokens of one request in all (every prompt, input or message): what is read to check them. */
export const OPENAI_MAX_INPUT_TOKENS = 262_144;
/** Tokens one answer generates in all (each choice's tokens, and one for its finish). */
export const OPENAI_MAX_OUTPUT_TOKENS = 16_384;
/** Characters of text one answer holds in all (replies and echoed prompts). */
export const OPENAI_MAX_OUTPUT_CHARS = 4 * 1024 * 1024;
/** Length of one embedding. */
export const OPENAI_MAX_DIMENSIONS = 8192;
/** Numbers of one embeddings answer in all (inputs × dimensions): about 3 MB of JSON, which the answer's path parses and writes whole. */
export const OPENAI_MAX_EMBEDDING_FLOATS = 131_072;
/** Choices of one prompt (`n`). */
export const OPENAI_MAX_N = 16;
/** Stop sequences of one request (OpenAI takes 4). */
export const OPENAI_MAX_STOP = 16;

const fmt = (n: number): string => n.toLocaleString("en-US");
const TOKEN = /\s*\S+/g;

/** The tokens (words) of `text`, counting no further than `limit` + 1: a long text is not read whole. */
export function countTokensUpTo(text: string, limit: number): number {
  TOKEN.lastIndex = 0;
  let n = 0;
  while (n <= limit && TOKEN.exec(text) !== null) n++;
  TOKEN.lastIndex = 0;
  return n;
}

/** The prompts of a request as texts with their token counts, or the refusal of the first one too long. */
export interface Prompts {
  texts: string[];
  tokens: number[];
  total: number;
}

/**
 * A completion's `prompt` or an embedding's `input` (a string, strings, token ids or lists of
 * them) read within the bounds: at most {@link OPENAI_MAX_INPUTS} of them, each within the
 * context length, all within {@link OPENAI_MAX_INPUT_TOKENS}. `context(tokens)` words vLLM's refusal
 * of one prompt past the model's length. Undefined when the value is none of these forms.
 */
export function readPrompts(value: unknown, field: "prompt" | "input", maxModelLen: number, context: (tokens: number) => string): Prompts | ErrorOutput | undefined {
  let items: unknown[];
  if (typeof value === "string") items = [value];
  else if (!Array.isArray(value) || value.length === 0) return undefined;
  else if (value.every((v) => typeof v === "number")) items = [value];
  else items = value;
  if (items.length > OPENAI_MAX_INPUTS) {
    return errorOutput(400, `Invalid '${field}': array too long. Expected an array with maximum length ${OPENAI_MAX_INPUTS}, but got an array with length ${items.length} instead.`, field);
  }
  const texts: string[] = [];
  const tokens: number[] = [];
  let total = 0;
  for (const item of items) {
    let text: string;
    let count: number;
    if (typeof item === "string") {
      text = item;
      count = countTokensUpTo(text, Math.min(maxModelLen, OPENAI_MAX_INPUT_TOKENS - total));
    } else if (Array.isArray(item) && item.every((v) => typeof v === "number")) {
      // Token ids: one token each, checked before they are joined into a text.
      count = item.length;
      text = count > maxModelLen || total + count > OPENAI_MAX_INPUT_TOKENS ? "" : item.join(" ");
    } else return undefined;
    if (count > maxModelLen) return errorOutput(400, context(count), field);
    total += count;
    if (total > OPENAI_MAX_INPUT_TOKENS) return tooManyInputTokens(field);
    texts.push(text);
    tokens.push(count);
  }
  return { texts, tokens, total };
}

export const tooManyInputTokens = (field: string): ErrorOutput =>
  errorOutput(400, `'${field}' holds more than ${fmt(OPENAI_MAX_INPUT_TOKENS)} tokens in all: minipod's openai handler reads at most that many in one request`, field);

/** vLLM's refusal of a prompt and completion past the context length. */
export function contextError(maxModelLen: number, input: number, maxTokens: number | undefined, param: string): ErrorOutput | undefined {
  if (input >= maxModelLen) {
    return errorOutput(400, `This model's maximum context length is ${maxModelLen} tokens. However, your request has ${input} input tokens. Please reduce the length of the input messages.`, param);
  }
  if (maxTokens !== undefined && input + maxTokens > maxModelLen) {
    return errorOutput(
      400,
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${input + maxTokens} tokens (${input} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
      "max_tokens",
    );
  }
  return undefined;
}

/** One kind of choice of an answer: how many there are, and at most how many tokens and characters each holds. */
export interface ChoiceCost {
  count: number;
  tokens: number;
  chars: number;
}

/**
 * Refuses an answer that would hold more than {@link OPENAI_MAX_OUTPUT_TOKENS} tokens or
 * {@link OPENAI_MAX_OUTPUT_CHARS} characters in all, before any of it is made.
 */
export function outputError(costs: ChoiceCost[], param: string): ErrorOutput | undefined {
  let tokens = 0;
  let chars = 0;
  let choices = 0;
  for (const c of costs) {
    choices += c.count;
    tokens += c.count * (c.tokens + 1);
    chars += c.count * c.chars;
  }
  const advice = "lower n, max_tokens or the number of prompts";
  if (tokens > OPENAI_MAX_OUTPUT_TOKENS) {
    return errorOutput(400, `this request would generate up to ${fmt(tokens)} tokens in ${fmt(choices)} choices, over the ${fmt(OPENAI_MAX_OUTPUT_TOKENS)} minipod's openai handler answers at once: ${advice}`, param);
  }
  if (chars > OPENAI_MAX_OUTPUT_CHARS) {
    return errorOutput(400, `this request would generate up to ${fmt(chars)} characters of text in ${fmt(choices)} choices, over the ${fmt(OPENAI_MAX_OUTPUT_CHARS)} minipod's openai handler answers at once: ${advice}`, param);
  }
  return undefined;
}

/** Longest word of the generated vocabulary, with its space: a generated reply's characters per token at most. */
export const GENERATED_CHARS_PER_TOKEN = 12;

/** The tokens and characters of `text` once cut at `maxTokens` tokens (an upper bound: `stop` may cut more). */
export function textCost(text: string, maxTokens: number | undefined): { tokens: number; chars: number } {
  if (maxTokens === undefined) return { tokens: countTokensUpTo(text, OPENAI_MAX_OUTPUT_TOKENS), chars: text.length };
  TOKEN.lastIndex = 0;
  let tokens = 0;
  while (tokens < maxTokens && TOKEN.exec(text) !== null) tokens++;
  const chars = tokens === maxTokens && TOKEN.lastIndex > 0 ? TOKEN.lastIndex : text.length;
  TOKEN.lastIndex = 0;
  return { tokens, chars };
}

/** What `LoopSlicer` reads: the wall's time and the event loop's turns (the clock's wall). */
export type LoopTime = Pick<Wall, "now" | "nextTurn">;

/**
 * Lets the event loop turn now and then while an answer is made: `tick()` waits for the next turn
 * once about `sliceMs` of wall time have passed since the last one (a virtual sleep of 0 ms does not).
 */
export class LoopSlicer {
  private since: number;
  constructor(
    private readonly time: LoopTime,
    private readonly sliceMs = 10,
  ) {
    this.since = time.now();
  }

  async tick(): Promise<void> {
    if (this.time.now() - this.since < this.sliceMs) return;
    await new Promise<void>((resolve) => this.time.nextTurn(resolve));
    this.since = this.time.now();
  }
}
