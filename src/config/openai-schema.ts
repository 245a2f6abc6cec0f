import { z } from "zod";
import { OPENAI_MAX_DIMENSIONS, OPENAI_MAX_INPUT_TOKENS } from "../domain/openai/bounds.js";
import { OPENAI_DEFAULTS, type OpenAiSettings, type OpenAiSettingsOf } from "../domain/openai/settings.js";

/** An endpoint's `openai`: how the built-in handlers answer its OpenAI routes. */
export const OpenAiConfigSchema = z
  .strictObject({
    models: z.array(z.string().min(1)).min(1).optional().describe(`Model ids /v1/models lists; a request naming another gets 404 (default ${JSON.stringify(OPENAI_DEFAULTS.models)})`),
    tokenDelayMs: z.int().min(0).optional().describe(`Virtual ms before each generated token, streamed or not (default ${OPENAI_DEFAULTS.tokenDelayMs})`),
    replyTokens: z.int().min(1).max(4096).optional().describe(`Words in a generated reply, before max_tokens and stop (default ${OPENAI_DEFAULTS.replyTokens})`),
    reply: z.string().optional().describe("A fixed reply instead of generated words"),
    toolCalls: z
      .array(
        z.strictObject({
          name: z.string().min(1).describe("A function the request offers in tools"),
          arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).optional().describe("Its arguments (an object, or JSON text); default: made from the tool's parameters schema"),
        }),
      )
      .optional()
      .describe("Tool calls made when the request offers those tools and its last message is not a tool result"),
    embeddingDimensions: z.int().min(1).max(OPENAI_MAX_DIMENSIONS).optional().describe(`Length of embeddings when the request gives no dimensions (default ${OPENAI_DEFAULTS.embeddingDimensions})`),
    maxModelLen: z
      .int()
      .min(16)
      .max(OPENAI_MAX_INPUT_TOKENS)
      .optional()
      .describe(`The model's context length in tokens (words): a prompt and its max_tokens must fit, or 400 as vLLM answers (default ${OPENAI_DEFAULTS.maxModelLen})`),
  })
  .describe('How the built-in handlers ("openai", and "echo" or "scripted" given an OpenAI request) answer /v2/{id}/openai/*');

export type OpenAiConfig = z.infer<typeof OpenAiConfigSchema>;

/** Each configured endpoint's settings over the defaults; other endpoints (made through the API) get the defaults. */
export function openAiSettingsOf(endpoints: ReadonlyArray<{ id: string; openai?: OpenAiConfig | undefined }>): OpenAiSettingsOf {
  const byId = new Map<string, OpenAiSettings>();
  for (const e of endpoints) {
    if (!e.openai) continue;
    const given = Object.fromEntries(Object.entries(e.openai).filter(([, v]) => v !== undefined));
    byId.set(e.id, Object.freeze({ ...OPENAI_DEFAULTS, ...given }));
  }
  return (id) => byId.get(id) ?? OPENAI_DEFAULTS;
}
