import { afterEach, describe, expect, it } from "vitest";
import { OPENAI_MAX_EMBEDDING_FLOATS, OPENAI_MAX_INPUTS, OPENAI_MAX_OUTPUT_TOKENS } from "../../src/domain/openai/bounds.js";
import { inProcess, type InProcess } from "../support/in-process.js";
import { chunksOf } from "../support/sse.js";

/**
 * Every request to the built-in openai handler is weighed before anything is made: a request of a
 * few hundred bytes once asked for millions of numbers or tokens (seconds of a blocked event loop,
 * gigabytes of heap, an aborted process). Past the bounds it gets vLLM's 400 naming the field.
 */
let e: InProcess;
afterEach(() => e?.close());

const boot = (openai: Record<string, unknown> = {}, handler = "openai") =>
  inProcess({ config: { endpoints: [{ id: "llm", handler, workersMin: 1, openai: { tokenDelayMs: 0, ...openai } }] } }).then((x) => (e = x));
const post = (route: string, body: Record<string, unknown>) => e.post(`/v2/llm/openai/v1/${route}`, body);

const refused = (res: { status: number; body: any }, param: string, message: RegExp) => {
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: "BadRequestError", param, code: 400 });
  expect(res.body.error.message).toMatch(message);
};

describe("the openai handler bounds what a request costs before making it", () => {
  it("embeddings: dimensions, the number of inputs and the numbers in all", { timeout: 60_000 }, async () => {
    await boot();
    // 546 bytes that asked for 6.5 million numbers (8.7 s, 639 MB).
    refused(await post("embeddings", { model: "minipod-llm", input: Array(100).fill("a"), dimensions: 65_536 }), "dimensions", /'dimensions' must be an integer from 1 to 8192/);
    // 10,000 inputs aborted the process (heap out of memory).
    refused(await post("embeddings", { input: Array(10_000).fill("a") }), "input", /array too long\. Expected an array with maximum length 2048, but got an array with length 10000/);
    refused(await post("embeddings", { input: Array(OPENAI_MAX_INPUTS).fill("a"), dimensions: 65 }), "dimensions", /2,048 inputs of 65 dimensions are 133,120 numbers, over the 131,072/);
    // At the bound: every vector, whole.
    const at = await post("embeddings", { input: Array.from({ length: OPENAI_MAX_INPUTS }, (_, i) => `text ${i}`), dimensions: OPENAI_MAX_EMBEDDING_FLOATS / OPENAI_MAX_INPUTS });
    expect(at.status).toBe(200);
    expect(at.body.data).toHaveLength(OPENAI_MAX_INPUTS);
    expect(at.body.data[2047].embedding).toHaveLength(64);
    expect(at.body.usage.prompt_tokens).toBe(2 * OPENAI_MAX_INPUTS);
  });

  it("embeddings: an input past the context length, as vLLM words it, token ids included", async () => {
    await boot({ maxModelLen: 64 });
    refused(await post("embeddings", { input: ["short", "word ".repeat(65)] }), "input", /^This model's maximum context length is 64 tokens\. However, you requested 65 tokens in the input for embedding generation\. Please reduce the length of the input\.$/);
    refused(await post("embeddings", { input: [Array(100).fill(7)] }), "input", /you requested 100 tokens in the input/);
    expect((await post("embeddings", { input: [Array(64).fill(7)] })).status).toBe(200);
  });

  it("completions: the number of prompts, and the tokens of prompts × n × max_tokens", async () => {
    await boot();
    // 800 KB that blocked the loop 24 s and left 2.1 GB.
    refused(await post("completions", { prompt: Array(200_000).fill(""), n: 16 }), "prompt", /array too long\. Expected an array with maximum length 2048, but got an array with length 200000/);
    refused(await post("completions", { prompt: Array(OPENAI_MAX_INPUTS).fill("x"), n: 16 }), "n", /would generate up to 557,056 tokens in 32,768 choices, over the 16,384 minipod's openai handler answers at once: lower n, max_tokens or the number of prompts/);
    refused(await post("completions", { prompt: "x", n: 1000 }), "n", /'n' must be an integer from 1 to 16/);
    refused(await post("completions", { prompt: "x", max_tokens: 1_000_000 }), "max_tokens", /^This model's maximum context length is 32768 tokens\. However, you requested 1000001 tokens \(1 in the messages, 1000000 in the completion\)\./);
    refused(await post("completions", { prompt: "x", stop: Array(17).fill("y") }), "stop", /Expected an array with maximum length 16/);
    // At the bound: 2,048 choices of 7 tokens and a finish each.
    const at = await post("completions", { prompt: Array.from({ length: 128 }, (_, i) => `p${i}`), n: 16, max_tokens: OPENAI_MAX_OUTPUT_TOKENS / 2048 - 1, minipod: { reply: "w ".repeat(40) } });
    expect(at.status).toBe(200);
    expect(at.body.choices).toHaveLength(2048);
    expect(at.body.usage.completion_tokens).toBe(2048 * 7);
  });

  it("completions: echoed prompts count toward the characters of the answer, prompts toward the tokens read", async () => {
    await boot({}, "echo");
    refused(await post("completions", { prompt: Array(64).fill("word ".repeat(20_000)), max_tokens: 1 }), "prompt", /'prompt' holds more than 262,144 tokens in all/);
    const long = "abcdefghijklmnopqrst ".repeat(4000);
    refused(await post("completions", { prompt: Array(64).fill(long), echo: true, max_tokens: 1 }), "max_tokens", /would generate up to 5,377,280 characters of text in 64 choices, over the 4,194,304/);
    expect((await post("completions", { prompt: Array(8).fill(long), echo: true, max_tokens: 1 })).status).toBe(200);
  });

  it("chat: many messages, a huge max_tokens (streamed too), n × a long scripted reply", { timeout: 90_000 }, async () => {
    await boot();
    const hello = [{ role: "user", content: "hello" }];
    refused(await post("chat/completions", { messages: Array(40_000).fill({ role: "user", content: "" }) }), "messages", /^This model's maximum context length is 32768 tokens\. However, your request has 40000 input tokens\. Please reduce the length of the input messages\.$/);
    refused(await post("chat/completions", { messages: hello, max_tokens: 2 ** 40 }), "max_tokens", /you requested 1099511627778 tokens \(2 in the messages, 1099511627776 in the completion\)/);
    const stream = await e.app.request("http://minipod.test/v2/llm/openai/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ messages: hello, stream: true, max_completion_tokens: 10_000_000 }),
    });
    expect(stream.status).toBe(400);
    expect(stream.headers.get("content-type")).toMatch(/json/);
    expect(((await stream.json()) as any).error.param).toBe("max_tokens");
    const long = "w ".repeat(5000);
    refused(await post("chat/completions", { messages: hello, n: 16, minipod: { reply: long } }), "n", /would generate up to 80,016 tokens in 16 choices/);
    // At the bound: 16 choices of 1,023 tokens, streamed and whole.
    const at = await post("chat/completions", { messages: hello, n: 16, max_tokens: 1023, minipod: { reply: long } });
    expect(at.status).toBe(200);
    expect(at.body.usage.completion_tokens).toBe(16 * 1023);
    const streamed = await e.app.request("http://minipod.test/v2/llm/openai/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer k", "content-type": "application/json" },
      body: JSON.stringify({ messages: hello, n: 16, max_tokens: 1023, stream: true, minipod: { reply: long } }),
    });
    expect(streamed.status).toBe(200);
    const chunks = chunksOf(await streamed.text());
    expect(chunks.filter((c: any) => c.choices?.[0]?.delta?.content === " w" || c.choices?.[0]?.delta?.content === "w")).toHaveLength(16 * 1023);
  });
});
