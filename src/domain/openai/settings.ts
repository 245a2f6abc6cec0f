/**
 * How the built-in OpenAI-compatible handlers answer (`openai`, and `echo`/`scripted` given an
 * OpenAI request): an endpoint's `openai` settings of the config, over these defaults.
 */
export interface OpenAiSettings {
  /** Model ids `/v1/models` lists; a request naming another model gets 404, as vLLM answers. */
  models: string[];
  /** Virtual ms before each generated token (streamed or not). */
  tokenDelayMs: number;
  /** Tokens (words) of a generated reply, before `max_tokens` and `stop`. */
  replyTokens: number;
  /** A fixed reply instead of generated words. */
  reply: string | undefined;
  /** Tool calls made whenever the request offers a tool of that name (and the last message is not a tool result). */
  toolCalls: ScriptedToolCall[] | undefined;
  /** Length of embedding vectors when the request gives no `dimensions`. */
  embeddingDimensions: number;
  /** The model's context length in tokens (words): a prompt and its `max_tokens` must fit, as vLLM's `max_model_len`. */
  maxModelLen: number;
}

/** A tool call to make: the function's name and, optionally, its arguments (else made from the tool's schema). */
export interface ScriptedToolCall {
  name: string;
  arguments?: Record<string, unknown> | string | undefined;
}

export const OPENAI_DEFAULTS: Readonly<OpenAiSettings> = Object.freeze({
  models: ["minipod-llm"],
  tokenDelayMs: 20,
  replyTokens: 16,
  reply: undefined,
  toolCalls: undefined,
  embeddingDimensions: 16,
  maxModelLen: 32_768,
});

/** Looks up an endpoint's settings; endpoints without any get the defaults. */
export type OpenAiSettingsOf = (endpointId: string) => OpenAiSettings;
