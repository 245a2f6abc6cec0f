/** `/v1/embeddings` and `/v1/models` of the built-in handlers. */
import { errorOutput, isErrorOutput, pickModel, positiveInt, unixNow, type Turn } from "./common.js";
import { seededRandom } from "../random.js";
import { countTokens, hashText, textsOf } from "./text.js";

/** A unit vector the same for the same model and text: close texts are not close vectors. */
export function embeddingOf(model: string, text: string, dimensions: number): number[] {
  const next = seededRandom(hashText(`${model}\u0000${text}`));
  const v = Array.from({ length: dimensions }, () => next() * 2 - 1);
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)) || 1;
  // Rounded through float32, so the float and base64 forms give the same numbers.
  return Array.from(new Float32Array(v.map((x) => x / norm)));
}

/** Float32 little-endian, base64: what `encoding_format: "base64"` asks (the `openai` SDK's default). */
const base64Of = (v: number[]): string => Buffer.from(new Float32Array(v).buffer).toString("base64");

export function embeddings(turn: Turn): unknown {
  const { body } = turn;
  const model = pickModel(body, turn.settings);
  if (isErrorOutput(model)) return model;
  const inputs = textsOf(body.input);
  if (!inputs) return errorOutput(400, "'input' is required: a string, a list of strings, or token ids", "input");
  const dimensions = positiveInt(body, "dimensions", turn.settings.embeddingDimensions, 65_536);
  if (isErrorOutput(dimensions)) return dimensions;
  const format = body.encoding_format ?? "float";
  if (format !== "float" && format !== "base64") return errorOutput(400, "'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
  const tokens = inputs.reduce((sum, t) => sum + countTokens(t), 0);
  return {
    object: "list",
    data: inputs.map((text, index) => {
      const vector = embeddingOf(model, text, dimensions!);
      return { object: "embedding", index, embedding: format === "base64" ? base64Of(vector) : vector };
    }),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/** `/v1/models` (the list) or `/v1/models/{id}` (one, or 404). */
export function models(turn: Turn, id: string | undefined): unknown {
  const created = unixNow(turn.ctx);
  const card = (m: string) => ({ id: m, object: "model", created, owned_by: "minipod" });
  if (id === undefined) return { object: "list", data: turn.settings.models.map(card) };
  return turn.settings.models.includes(id) ? card(id) : errorOutput(404, `The model \`${id}\` does not exist.`, "model");
}
