import { chatCompletion } from "../openai/chat.js";
import type { LoopTime } from "../openai/bounds.js";
import { errorOutput, type Turn } from "../openai/common.js";
import { textCompletion } from "../openai/completions.js";
import { embeddings, models } from "../openai/embeddings.js";
import { isOpenAiInput, type OpenAiJobInput } from "../openai/protocol.js";
import type { OpenAiSettingsOf } from "../openai/settings.js";
import type { Handler, HandlerContext } from "./types.js";

/**
 * Answers one OpenAI request the way an OpenAI-compatible worker does: a response object, a
 * generator of chunk objects for `stream: true`, or an error object (`{"error": {..., "code": 404}}`).
 * Routes are taken with or without their `/v1` prefix.
 */
export function answerOpenAi(input: OpenAiJobInput, ctx: HandlerContext, settingsOf: OpenAiSettingsOf, time: LoopTime, echo: boolean): unknown {
  const turn: Turn = { body: input.openai_input, settings: settingsOf(ctx.endpointId), ctx, echo, time };
  const route = input.openai_route.split("?")[0]!.replace(/\/+$/, "").replace(/^\/v1(?=\/)/, "");
  if (route === "/chat/completions") return chatCompletion(turn);
  if (route === "/completions") return textCompletion(turn);
  if (route === "/embeddings") return embeddings(turn);
  if (route === "/models") return models(turn, undefined);
  if (route.startsWith("/models/")) return models(turn, decodedOrRaw(route.slice("/models/".length)));
  return errorOutput(404, `Invalid route ${input.openai_route}: this handler serves /v1/chat/completions, /v1/completions, /v1/embeddings and /v1/models`);
}

/**
 * The `openai` handler: every OpenAI route with deterministic answers, configured per endpoint
 * (`openai` of the endpoint's config). A job that is not an OpenAI request fails, saying what
 * it needs: `{openai_route, openai_input}`, what `/v2/{id}/openai/*` submits.
 */
export function openAiHandler(settingsOf: OpenAiSettingsOf, time: LoopTime): Handler {
  return (input, ctx) => {
    if (!isOpenAiInput(input)) {
      throw new Error(
        'the openai handler answers OpenAI requests: call /v2/{endpoint_id}/openai/v1/... (for example with the openai SDK), or give the job an input {"openai_route": "/v1/chat/completions", "openai_input": {...}}',
      );
    }
    return answerOpenAi(input, ctx, settingsOf, time, false);
  };
}

/** A path segment decoded, or as sent when its percent-encoding is malformed (no model has such an id: 404). */
function decodedOrRaw(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
