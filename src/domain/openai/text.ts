/**
 * Deterministic text for the built-in OpenAI handlers: the same request always gets the same
 * reply. A "token" here is a word with the white space before it, so a reply is split into tokens
 * and joined back exactly, and usage counts words, not a model tokenizer's tokens.
 */
import { seededRandom } from "../random.js";
import { isRecord } from "./protocol.js";

/** FNV-1a, 32 bits: a seed from text; given the hash of a prefix, the hash of the prefix and `text`. */
export function hashText(text: string, h = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const WORDS = (
  "the a minipod reply answers every question with calm and steady words about queues workers jobs " +
  "time clocks streams tokens models endpoints requests that arrive wait run and finish on a virtual " +
  "schedule while tests watch each step so nothing surprises anyone later in production today"
).split(" ");

/** `count` words drawn from a fixed vocabulary by a PRNG seeded with `seed` (a text, or its {@link hashText}), as a sentence. */
export function generatedText(seed: string | number, count: number): string {
  const next = seededRandom(typeof seed === "number" ? seed : hashText(seed));
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(WORDS[Math.floor(next() * WORDS.length)]!);
  const text = words.join(" ");
  return text.length === 0 ? text : `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

const TOKEN = /\s*\S+/g;

/** The tokens of a text: each word with the white space before it (trailing white space joins the last). */
export function tokensOf(text: string): string[] {
  const tokens = text.match(TOKEN) ?? [];
  const joined = tokens.join("");
  if (joined.length < text.length) {
    if (tokens.length === 0) return [text];
    tokens[tokens.length - 1] += text.slice(joined.length);
  }
  return tokens;
}

export const countTokens = (text: string): number => text.match(TOKEN)?.length ?? 0;

/** The text of a message's `content`: a string, or the `text` of its parts. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : ""))
    .filter((t) => t !== "")
    .join("\n");
}

/**
 * Where a reply stops: cut before the first `stop` sequence, then at `maxTokens` tokens.
 * `finish` is "length" when `maxTokens` cut it, else "stop".
 */
export function limitReply(text: string, stop: string[], maxTokens: number | undefined): { tokens: string[]; finish: "stop" | "length" } {
  let cut = text;
  for (const s of stop) {
    const at = s === "" ? -1 : cut.indexOf(s);
    if (at >= 0) cut = cut.slice(0, at);
  }
  const tokens = tokensOf(cut);
  if (maxTokens !== undefined && tokens.length > maxTokens) return { tokens: tokens.slice(0, maxTokens), finish: "length" };
  return { tokens, finish: "stop" };
}

/** `stop` of a request: a string or a list of them. */
export function stopList(stop: unknown): string[] {
  if (typeof stop === "string") return [stop];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === "string") : [];
}
