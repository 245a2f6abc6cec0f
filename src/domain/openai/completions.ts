/** `/v1/completions` of the built-in handlers: the legacy text completion, streamed or not. */
import { LoopSlicer, OPENAI_MAX_N, contextError, outputError, readPrompts, type ChoiceCost } from "./bounds.js";
import { errorOutput, isErrorOutput, pause, pickModel, positiveInt, replyCost, replyText, responseId, scriptOf, seedOf, stopsOf, tokenDelay, unixNow, type Turn } from "./common.js";
import { isRecord } from "./protocol.js";
import { limitReply } from "./text.js";

interface Choice {
  text: string;
  tokens: string[];
  finish: string;
}

export function textCompletion(turn: Turn): unknown {
  const { body, ctx } = turn;
  const model = pickModel(body, turn.settings);
  if (isErrorOutput(model)) return model;
  const n = positiveInt(body, "n", 1, OPENAI_MAX_N);
  // OpenAI's legacy default: 16 tokens (vLLM's too).
  const maxTokens = positiveInt(body, "max_tokens", 16);
  if (isErrorOutput(n)) return n;
  if (isErrorOutput(maxTokens)) return maxTokens;
  const stops = stopsOf(body);
  if (isErrorOutput(stops)) return stops;
  const maxLen = turn.settings.maxModelLen;
  const prompts = readPrompts(body.prompt, "prompt", maxLen, (t) => contextError(maxLen, t, maxTokens, "prompt")!.error.message);
  if (!prompts) return errorOutput(400, "'prompt' is required: a string, a list of strings, or token ids", "prompt");
  if (isErrorOutput(prompts)) return prompts;
  const script = scriptOf(body);
  const costs: ChoiceCost[] = [];
  for (const [k, prompt] of prompts.texts.entries()) {
    const context = contextError(maxLen, prompts.tokens[k]!, maxTokens, "prompt");
    if (context) return context;
    const reply = replyCost(turn, script, prompt, maxTokens);
    costs.push({ count: n!, tokens: reply.tokens, chars: reply.chars + (body.echo === true ? prompt.length : 0) });
  }
  const tooLarge = outputError(costs, n! > 1 ? "n" : "max_tokens");
  if (tooLarge) return tooLarge;
  const head = { id: responseId("cmpl", ctx), object: "text_completion", created: unixNow(ctx), model };
  const delay = tokenDelay(turn, script);
  const makeChoices = async (): Promise<Choice[]> => {
    const slicer = new LoopSlicer(turn.time);
    const choices: Choice[] = [];
    for (const prompt of prompts.texts) {
      const seed = seedOf([model, prompt, body.seed ?? null]);
      for (let i = 0; i < n!; i++) {
        const { tokens, finish } = limitReply(replyText(turn, script, prompt, seed(i)), stops, maxTokens);
        choices.push({ text: body.echo === true ? prompt : "", tokens, finish });
        await slicer.tick();
      }
    }
    return choices;
  };
  const usageOf = (choices: Choice[]) => {
    const completionTokens = choices.reduce((sum, c) => sum + c.tokens.length, 0);
    return { prompt_tokens: prompts.total, completion_tokens: completionTokens, total_tokens: prompts.total + completionTokens };
  };
  if (body.stream === true) {
    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    return (async function* () {
      const choices = await makeChoices();
      const slicer = new LoopSlicer(turn.time);
      const chunk = (index: number, text: string, finish: string | null) => ({ ...head, choices: [{ index, text, logprobs: null, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) });
      for (const [index, c] of choices.entries()) {
        if (c.text !== "") yield chunk(index, c.text, null);
        for (const token of c.tokens) {
          await pause(ctx, delay);
          await slicer.tick();
          yield chunk(index, token, null);
        }
        yield chunk(index, "", c.finish);
      }
      if (includeUsage) yield { ...head, choices: [], usage: usageOf(choices) };
    })();
  }
  return (async () => {
    const choices = await makeChoices();
    for (const c of choices) await pause(ctx, delay * c.tokens.length);
    return { ...head, choices: choices.map((c, index) => ({ index, text: c.text + c.tokens.join(""), logprobs: null, finish_reason: c.finish })), usage: usageOf(choices) };
  })();
}
