/**
 * `/v1/chat/completions` of the built-in handlers: a deterministic reply (or tool calls), token by
 * token on the virtual clock, with usage, `n`, `max_tokens`/`max_completion_tokens`, `stop`,
 * `response_format` and `stream_options.include_usage` honoured.
 */
import {
  errorOutput,
  isErrorOutput,
  pause,
  pickModel,
  positiveInt,
  replyText,
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
import { boundedSchemaValue } from "./schema-value.js";
import { contentText, countTokens, generatedText, limitReply, stopList } from "./text.js";

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
  const n = positiveInt(body, "n", 1, 16);
  const maxTokens = positiveInt(body, "max_completion_tokens", undefined) ?? positiveInt(body, "max_tokens", undefined);
  if (isErrorOutput(n)) return n;
  if (isErrorOutput(maxTokens)) return maxTokens;
  const script = scriptOf(body);
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const prompt = contentText(lastUser?.content).trim();
  const promptTokens = messages.reduce((sum, m) => sum + countTokens(contentText(m.content)), 0);
  const calls = toolCallsFor(body, turn, script);
  if (isErrorOutput(calls)) return calls;
  const reply = formattedReply(body.response_format, turn);
  if (isErrorOutput(reply)) return reply;
  const choices: Choice[] = [];
  for (let i = 0; i < n!; i++) {
    if (calls) {
      choices.push({ tokens: [], toolCalls: calls.map((c, k) => ({ id: toolCallId(ctx, i, k), type: "function", function: c })), finish: "tool_calls" });
      continue;
    }
    const seed = JSON.stringify([model, messages, body.seed ?? null, i]);
    const text = reply ?? (isRecord(body.response_format) && body.response_format.type === "json_object" && !turn.echo
      ? JSON.stringify({ reply: turn.settings.reply ?? generatedText(seed, turn.settings.replyTokens) })
      : replyText(turn, script, prompt, seed));
    const { tokens, finish } = limitReply(text, stopList(body.stop), maxTokens);
    choices.push({ tokens, toolCalls: [], finish });
  }
  const completionTokens = choices.reduce((sum, c) => sum + c.tokens.length + c.toolCalls.reduce((t, call) => t + 1 + countTokens(call.function.arguments), 0), 0);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const id = responseId("chatcmpl", ctx);
  const created = unixNow(ctx);
  const head = (object: string) => ({ id, object, created, model });
  const delay = tokenDelay(turn, script);
  if (body.stream === true) {
    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    return streamChunks(turn, head("chat.completion.chunk"), choices, delay, includeUsage ? usage : undefined);
  }
  return (async () => {
    for (const c of choices) await pause(ctx, delay * (c.tokens.length + c.toolCalls.length));
    return {
      ...head("chat.completion"),
      choices: choices.map((c, index) => ({
        index,
        message: { role: "assistant", content: c.toolCalls.length > 0 ? null : c.tokens.join(""), ...(c.toolCalls.length > 0 ? { tool_calls: c.toolCalls } : {}) },
        logprobs: null,
        finish_reason: c.finish,
      })),
      usage,
    };
  })();
}

async function* streamChunks(turn: Turn, head: Record<string, unknown>, choices: Choice[], delay: number, usage: Record<string, number> | undefined) {
  const chunk = (index: number, delta: Record<string, unknown>, finish: string | null = null) => ({
    ...head,
    choices: [{ index, delta, logprobs: null, finish_reason: finish }],
    ...(usage ? { usage: null } : {}),
  });
  for (const [index, c] of choices.entries()) {
    yield chunk(index, { role: "assistant", content: c.toolCalls.length > 0 ? null : "" });
    for (const token of c.tokens) {
      await pause(turn.ctx, delay);
      yield chunk(index, { content: token });
    }
    for (const [k, call] of c.toolCalls.entries()) {
      await pause(turn.ctx, delay);
      yield chunk(index, { tool_calls: [{ index: k, ...call }] });
    }
    yield chunk(index, {}, c.finish);
  }
  if (usage) yield { ...head, choices: [], usage };
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
  for (const c of calls) {
    let args: unknown = "arguments" in c ? c.arguments : undefined;
    if (args === undefined) {
      const value = boundedSchemaValue(offered.get(c.name)!.parameters ?? { type: "object" });
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
