/** `/v1/completions` of the built-in handlers: the legacy text completion, streamed or not. */
import { errorOutput, isErrorOutput, pause, pickModel, positiveInt, replyText, responseId, scriptOf, tokenDelay, unixNow, type Turn } from "./common.js";
import { isRecord } from "./protocol.js";
import { countTokens, limitReply, stopList, textsOf } from "./text.js";

export function textCompletion(turn: Turn): unknown {
  const { body, ctx } = turn;
  const model = pickModel(body, turn.settings);
  if (isErrorOutput(model)) return model;
  const prompts = textsOf(body.prompt);
  if (!prompts) return errorOutput(400, "'prompt' is required: a string, a list of strings, or token ids", "prompt");
  const n = positiveInt(body, "n", 1, 16);
  // OpenAI's legacy default: 16 tokens.
  const maxTokens = positiveInt(body, "max_tokens", 16);
  if (isErrorOutput(n)) return n;
  if (isErrorOutput(maxTokens)) return maxTokens;
  const script = scriptOf(body);
  const choices: Array<{ text: string; tokens: string[]; finish: string }> = [];
  for (const prompt of prompts) {
    for (let i = 0; i < n!; i++) {
      const seed = JSON.stringify([model, prompt, body.seed ?? null, i]);
      const { tokens, finish } = limitReply(replyText(turn, script, prompt, seed), stopList(body.stop), maxTokens);
      const echoed = body.echo === true ? prompt : "";
      choices.push({ text: echoed, tokens, finish });
    }
  }
  const promptTokens = prompts.reduce((sum, p) => sum + countTokens(p), 0);
  const completionTokens = choices.reduce((sum, c) => sum + c.tokens.length, 0);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const head = { id: responseId("cmpl", ctx), object: "text_completion", created: unixNow(ctx), model };
  const delay = tokenDelay(turn, script);
  if (body.stream === true) {
    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    return (async function* () {
      const chunk = (index: number, text: string, finish: string | null) => ({ ...head, choices: [{ index, text, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) });
      for (const [index, c] of choices.entries()) {
        if (c.text !== "") yield chunk(index, c.text, null);
        for (const token of c.tokens) {
          await pause(ctx, delay);
          yield chunk(index, token, null);
        }
        yield chunk(index, "", c.finish);
      }
      if (includeUsage) yield { ...head, choices: [], usage };
    })();
  }
  return (async () => {
    for (const c of choices) await pause(ctx, delay * c.tokens.length);
    return { ...head, choices: choices.map((c, index) => ({ index, text: c.text + c.tokens.join(""), logprobs: null, finish_reason: c.finish })), usage };
  })();
}
