/** `/v1/embeddings` and `/v1/models` of the built-in handlers. */
import { errorOutput, isErrorOutput, pickModel, positiveInt, unixNow, type Turn } from "./common.js";
import { seededRandom } from "../random.js";
import { LoopSlicer, OPENAI_MAX_DIMENSIONS, OPENAI_MAX_EMBEDDING_FLOATS, readPrompts } from "./bounds.js";
import { hashText } from "./text.js";

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
  const dimensions = positiveInt(body, "dimensions", turn.settings.embeddingDimensions, OPENAI_MAX_DIMENSIONS);
  if (isErrorOutput(dimensions)) return dimensions;
  const format = body.encoding_format ?? "float";
  if (format !== "float" && format !== "base64") return errorOutput(400, "'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
  const maxLen = turn.settings.maxModelLen;
  const inputs = readPrompts(body.input, "input", maxLen, (tokens) =>
    `This model's maximum context length is ${maxLen} tokens. However, you requested ${tokens} tokens in the input for embedding generation. Please reduce the length of the input.`,
  );
  if (!inputs) return errorOutput(400, "'input' is required: a string, a list of strings, or token ids", "input");
  if (isErrorOutput(inputs)) return inputs;
  const floats = inputs.texts.length * dimensions!;
  if (floats > OPENAI_MAX_EMBEDDING_FLOATS) {
    const fmt = (n: number) => n.toLocaleString("en-US");
    return errorOutput(
      400,
      `${fmt(inputs.texts.length)} inputs of ${fmt(dimensions!)} dimensions are ${fmt(floats)} numbers, over the ${fmt(OPENAI_MAX_EMBEDDING_FLOATS)} minipod's openai handler answers at once: send fewer inputs or dimensions per request`,
      body.dimensions === undefined ? "input" : "dimensions",
    );
  }
  return (async () => {
    // Made a slice at a time: hundreds of thousands of numbers hold the event loop for a while.
    const slicer = new LoopSlicer(turn.time);
    const data: Array<{ object: string; index: number; embedding: number[] | string }> = [];
    for (const [index, text] of inputs.texts.entries()) {
      const vector = embeddingOf(model, text, dimensions!);
      data.push({ object: "embedding", index, embedding: format === "base64" ? base64Of(vector) : vector });
      await slicer.tick();
    }
    return { object: "list", data, model, usage: { prompt_tokens: inputs.total, total_tokens: inputs.total } };
  })();
}

/** `/v1/models` (the list) or `/v1/models/{id}` (one, or 404). */
export function models(turn: Turn, id: string | undefined): unknown {
  const created = unixNow(turn.ctx);
  const card = (m: string) => ({ id: m, object: "model", created, owned_by: "minipod" });
  if (id === undefined) return { object: "list", data: turn.settings.models.map(card) };
  return turn.settings.models.includes(id) ? card(id) : errorOutput(404, `The model \`${id}\` does not exist.`, "model");
}
