/**
 * `/v1/chat/completions` of the built-in handlers: a deterministic reply (or tool calls), token by
 * token on the virtual clock, with usage, `n`, `max_tokens`/`max_completion_tokens`, `stop`,
 * `response_format` and `stream_options.include_usage` honoured.
 */
import { GENERATED_CHARS_PER_TOKEN, LoopSlicer, OPENAI_MAX_INPUT_TOKENS, OPENAI_MAX_N, contextError, countTokensUpTo, outputError, textCost, tooManyInputTokens } from "./bounds.js";
import {
  errorOutput,
  isErrorOutput,
  pause,
  pickModel,
  positiveInt,
  replyCost,
  replyText,
  seedOf,
  stopsOf,
  responseId,
  scriptOf,
  tokenDelay,
  toolCallId,
  unixNow,
  type ErrorOutput,
  type Script,
  type Turn,
} from "./common.js";
import { isRecord } from "./protocol.js";
import { boundedSchemaValue, schemaBudget } from "./schema-value.js";
import { contentText, countTokens, generatedText, limitReply } from "./text.js";

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

interface Choice {
  tokens: string[];
  toolCalls: ToolCall[];
  finish: "stop" | "length" | "tool_calls";
}

/** The handler's answer: a chat completion, its chunks (a generator) when streamed, or an error. */
export function chatCompletion(turn: Turn): unknown {
  const { body, ctx } = turn;
  const model = pickModel(body, turn.settings);
  if (isErrorOutput(model)) return model;
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0 || !messages.every(isRecord)) {
    return errorOutput(400, "'messages' is required: a non-empty list of {role, content}", "messages");
  }
  const n = positiveInt(body, "n", 1, OPENAI_MAX_N);
  const maxTokens = positiveInt(body, "max_completion_tokens", undefined) ?? positiveInt(body, "max_tokens", undefined);
  if (isErrorOutput(n)) return n;
  if (isErrorOutput(maxTokens)) return maxTokens;
  const stops = stopsOf(body);
  if (isErrorOutput(stops)) return stops;
  const promptTokens = messageTokens(messages);
  if (isErrorOutput(promptTokens)) return promptTokens;
  // Each message takes a token or more of the chat template besides its words.
  const context = contextError(turn.settings.maxModelLen, promptTokens + messages.length, maxTokens, "messages");
  if (context) return context;
  const script = scriptOf(body);
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const prompt = contentText(lastUser?.content).trim();
  const calls = toolCallsFor(body, turn, script);
  if (isErrorOutput(calls)) return calls;
  const reply = formattedReply(body.response_format, turn);
  if (isErrorOutput(reply)) return reply;
  const jsonObject = isRecord(body.response_format) && body.response_format.type === "json_object" && !turn.echo;
  const cost = calls
    ? { tokens: calls.reduce((t, c) => t + 1 + countTokens(c.arguments), 0), chars: calls.reduce((t, c) => t + c.arguments.length, 0) }
    : reply !== undefined
      ? textCost(reply, maxTokens)
      : jsonObject
        ? { tokens: Math.min(maxTokens ?? Infinity, turn.settings.replyTokens + 1), chars: (turn.settings.reply?.length ?? turn.settings.replyTokens * GENERATED_CHARS_PER_TOKEN) + 16 }
        : replyCost(turn, script, prompt, maxTokens);
  const tooLarge = outputError([{ count: n!, ...cost }], n! > 1 ? "n" : "max_tokens");
  if (tooLarge) return tooLarge;
  const makeChoices = async (): Promise<Choice[]> => {
    const slicer = new LoopSlicer(turn.time);
    const seed = seedOf([model, messages, body.seed ?? null]);
    const choices: Choice[] = [];
    for (let i = 0; i < n!; i++) {
      if (calls) {
        choices.push({ tokens: [], toolCalls: calls.map((c, k) => ({ id: toolCallId(ctx, i, k), type: "function", function: c })), finish: "tool_calls" });
        continue;
      }
      const text = reply ?? (jsonObject ? JSON.stringify({ reply: turn.settings.reply ?? generatedText(seed(i), turn.settings.replyTokens) }) : replyText(turn, script, prompt, seed(i)));
      const { tokens, finish } = limitReply(text, stops, maxTokens);
      choices.push({ tokens, toolCalls: [], finish });
      await slicer.tick();
    }
    return choices;
  };
  const usageOf = (choices: Choice[]) => {
    const completionTokens = choices.reduce((sum, c) => sum + c.tokens.length + c.toolCalls.reduce((t, call) => t + 1 + countTokens(call.function.arguments), 0), 0);
    return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  };
  const id = responseId("chatcmpl", ctx);
  const created = unixNow(ctx);
  const head = (object: string) => ({ id, object, created, model });
  const delay = tokenDelay(turn, script);
  if (body.stream === true) {
    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    return streamChunks(turn, head("chat.completion.chunk"), makeChoices, delay, includeUsage ? usageOf : undefined);
  }
  return (async () => {
    const choices = await makeChoices();
    for (const c of choices) await pause(ctx, delay * (c.tokens.length + c.toolCalls.length));
    return {
      ...head("chat.completion"),
      choices: choices.map((c, index) => ({
        index,
        message: { role: "assistant", content: c.toolCalls.length > 0 ? null : c.tokens.join(""), ...(c.toolCalls.length > 0 ? { tool_calls: c.toolCalls } : {}) },
        logprobs: null,
        finish_reason: c.finish,
      })),
      usage: usageOf(choices),
    };
  })();
}

/** The words of every message, read no further than {@link OPENAI_MAX_INPUT_TOKENS} in all. */
function messageTokens(messages: Array<Record<string, unknown>>): number | ErrorOutput {
  if (messages.length > OPENAI_MAX_INPUT_TOKENS) return tooManyInputTokens("messages");
  let total = 0;
  for (const m of messages) {
    total += countTokensUpTo(contentText(m.content), OPENAI_MAX_INPUT_TOKENS - total);
    if (total > OPENAI_MAX_INPUT_TOKENS) return tooManyInputTokens("messages");
  }
  return total;
}

async function* streamChunks(
  turn: Turn,
  head: Record<string, unknown>,
  makeChoices: () => Promise<Choice[]>,
  delay: number,
  usageOf: ((choices: Choice[]) => Record<string, number>) | undefined,
) {
  const choices = await makeChoices();
  const slicer = new LoopSlicer(turn.time);
  const chunk = (index: number, delta: Record<string, unknown>, finish: string | null = null) => ({
    ...head,
    choices: [{ index, delta, logprobs: null, finish_reason: finish }],
    ...(usageOf ? { usage: null } : {}),
  });
  for (const [index, c] of choices.entries()) {
    yield chunk(index, { role: "assistant", content: c.toolCalls.length > 0 ? null : "" });
    for (const token of c.tokens) {
      await pause(turn.ctx, delay);
      await slicer.tick();
      yield chunk(index, { content: token });
    }
    for (const [k, call] of c.toolCalls.entries()) {
      await pause(turn.ctx, delay);
      yield chunk(index, { tool_calls: [{ index: k, ...call }] });
    }
    yield chunk(index, {}, c.finish);
  }
  if (usageOf) yield { ...head, choices: [], usage: usageOf(choices) };
}

/**
 * The calls a reply makes, if any: when the request offers tools, `tool_choice` is not "none" and
 * the last message is not a tool result, the scripted calls it offers (the request's
 * `minipod.toolCalls`, else the config's `toolCalls`), else the tool `tool_choice` names, else
 * the first tool offered. Arguments are the scripted ones or made from the tool's parameters.
 */
function toolCallsFor(body: Record<string, unknown>, turn: Turn, script: Script): Array<{ name: string; arguments: string }> | ErrorOutput | undefined {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isRecord).map((t) => (isRecord(t.function) ? t.function : {})) : [];
  const offered = new Map(tools.filter((f) => typeof f.name === "string").map((f) => [f.name as string, f]));
  if (offered.size === 0 || body.tool_choice === "none") return undefined;
  const messages = body.messages as Array<Record<string, unknown>>;
  if (messages[messages.length - 1]?.role === "tool") return undefined;
  const choice = body.tool_choice;
  const forced = isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === "string" ? choice.function.name : undefined;
  const scripted = (script.toolCalls ?? turn.settings.toolCalls ?? []).filter((c) => offered.has(c.name) && (forced === undefined || c.name === forced));
  const calls = scripted.length > 0 ? scripted : [{ name: forced !== undefined && offered.has(forced) ? forced : offered.keys().next().value! }];
  const made: Array<{ name: string; arguments: string }> = [];
  // The arguments of every call made from a schema share the bounds of one value.
  const budget = schemaBudget();
  for (const c of calls) {
    let args: unknown = "arguments" in c ? c.arguments : undefined;
    if (args === undefined) {
      const value = boundedSchemaValue(offered.get(c.name)!.parameters ?? { type: "object" }, budget);
      if ("error" in value) return errorOutput(400, `tools: the parameters of '${c.name}' are too large to answer: ${value.error}`, "tools");
      args = value.value;
    }
    made.push({ name: c.name, arguments: typeof args === "string" ? args : JSON.stringify(args) });
  }
  return made;
}

/**
 * The reply `response_format: {type: "json_schema"}` asks for (JSON fitting its schema, the same
 * for every choice), an error when the schema asks for too large a value, or undefined for the
 * other formats (a JSON object or the text, made per choice).
 */
function formattedReply(format: unknown, turn: Turn): string | ErrorOutput | undefined {
  if (!isRecord(format) || turn.echo || format.type !== "json_schema" || !isRecord(format.json_schema)) return undefined;
  const value = boundedSchemaValue(format.json_schema.schema ?? {});
  if ("error" in value) return errorOutput(400, `response_format.json_schema is too large to answer: ${value.error}`, "response_format");
  return JSON.stringify(value.value);
}
