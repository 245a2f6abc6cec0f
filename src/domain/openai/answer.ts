/**
 * How a job's output becomes the HTTP answer to an OpenAI route: a JSON body for a plain request,
 * Server-Sent Events for `stream: true`. The service's vLLM worker is the model: a plain request
 * yields one response object (the job's output is `[response]` with `return_aggregate_stream`,
 * which it always sets; without it the output is `[]` and the response a streamed item only); a streamed one yields SSE text (`"data: {...}\n\n"`, in
 * batches, `data: [DONE]` last) or, with `RAW_OPENAI_OUTPUT=0`, lists of chunk objects.
 */
import { valueOf } from "../json-text.js";
import type { StreamItem } from "../job.js";
import { errorAnswer, handlerError, isRecord, type OpenAiJsonAnswer } from "./protocol.js";

export const DONE_EVENT = "data: [DONE]\n\n";

/**
 * What a finished job answers: its output; a list of one is that one. Never what it streamed: the
 * service's vLLM worker runs with `return_aggregate_stream`, so its output holds the response, and
 * a generator without the flag leaves `[]`, which a plain request must not be answered from its
 * chunks (that hid the forgotten flag, as `/status` once did).
 */
export function resultValue(stored: unknown): unknown {
  // A large output is kept as its text (RawJson): an answer is made from its value.
  const output = valueOf(stored);
  return Array.isArray(output) && output.length === 1 ? output[0] : output;
}

/** The JSON answer to a plain request whose job COMPLETED with `value`. */
export function completedAnswer(value: unknown, route: string): OpenAiJsonAnswer {
  if (value === undefined || value === null) return errorAnswer(500, `the endpoint's handler returned no output for ${route}`);
  if (Array.isArray(value) && value.length === 0) {
    return errorAnswer(
      500,
      `the endpoint's handler returned an empty list for ${route}: a generator's yields are its output only with return_aggregate_stream (runpod.serverless.start({..., "return_aggregate_stream": True})); without it they reach streamed requests only`,
    );
  }
  return handlerError(value) ?? { status: 200, body: value };
}

const SSE_FIELD = /^(?:data|event|id|retry)?:/;

/**
 * The event-stream text of one streamed output, as relayed to the client: text already in SSE
 * form is sent as it is (ended by a blank line), a list is each of its items, an error object is
 * OpenAI's `data: {"error": {...}}`, anything else one `data:` event of its JSON.
 */
export function sseText(output: unknown): string {
  if (typeof output === "string" && SSE_FIELD.test(output)) return output.endsWith("\n\n") ? output : output.endsWith("\n") ? `${output}\n` : `${output}\n\n`;
  if (Array.isArray(output)) return output.map(sseText).join("");
  const error = handlerError(output);
  return `data: ${JSON.stringify(error ? error.body : output)}\n\n`;
}

/** The `data: {"error": ...}` event that ends a stream whose job did not complete. */
export const errorEvent = (answer: OpenAiJsonAnswer): string => `data: ${JSON.stringify(answer.body)}\n\n`;

/**
 * A whole response given to a streamed request (a handler that does not stream): a chat
 * completion or text completion becomes the chunks a streaming server would have sent for it,
 * anything else is sent as one event.
 */
export function streamOfWhole(value: unknown): string {
  if (!isRecord(value) || !Array.isArray(value.choices)) return sseText(value);
  const chat = value.object === "chat.completion";
  if (!chat && value.object !== "text_completion") return sseText(value);
  const head = { id: value.id, object: chat ? "chat.completion.chunk" : "text_completion", created: value.created, model: value.model };
  let text = "";
  for (const c of value.choices as unknown[]) {
    if (!isRecord(c)) continue;
    const m = isRecord(c.message) ? c.message : {};
    const toolCalls = Array.isArray(m.tool_calls) ? m.tool_calls.map((t, index) => (isRecord(t) ? { index, ...t } : t)) : undefined;
    const choice = chat
      ? {
          index: c.index,
          delta: { role: m.role ?? "assistant", content: m.content ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
          logprobs: null,
          finish_reason: c.finish_reason ?? "stop",
        }
      : { index: c.index, text: c.text ?? "", logprobs: null, finish_reason: c.finish_reason ?? "stop" };
    text += sseText({ ...head, choices: [choice] });
  }
  if (value.usage !== undefined) text += sseText({ ...head, choices: [], usage: value.usage });
  return text;
}

const NOT_YET = Symbol("not yet");

/**
 * Rebuilds outputs that were split into stream items of at most 1 MB (`metrics.chunk`/`chunks`/
 * `encoding`, see stream-chunks.ts) before they are relayed; whole items pass through.
 */
export class SplitOutputs {
  private pieces: string[] = [];

  /** The output an item completes, or `SplitOutputs.NOT_YET` while its pieces are still coming. */
  take(item: StreamItem): unknown {
    const m = item.metrics;
    if (!m || typeof m.chunk !== "number" || typeof m.chunks !== "number" || typeof item.output !== "string") return item.output;
    this.pieces.push(item.output);
    if (m.chunk < m.chunks - 1) return NOT_YET;
    const text = this.pieces.join("");
    this.pieces = [];
    return m.encoding === "json" ? (JSON.parse(text) as unknown) : text;
  }

  static readonly NOT_YET = NOT_YET;
}
