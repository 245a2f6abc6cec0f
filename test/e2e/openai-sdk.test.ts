import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCli, type RunningCli } from "../support/cli.js";
import { recorder, type Recorder } from "../support/recorder.js";

const dir = mkdtempSync(join(tmpdir(), "minipod-openai-"));
const configFile = join(dir, "emulator.config.json");
const config = {
  endpoints: [
    { id: "llm", handler: "openai", workersMin: 1, workersMax: 2, coldStartMs: 0, openai: { models: ["org/tiny-model"], tokenDelayMs: 2, replyTokens: 12, embeddingDimensions: 24 } },
  ],
};
writeFileSync(configFile, JSON.stringify(config));

/** The real `openai` package, unchanged, pointed at the endpoint as the service's docs say: `{base}/v2/{endpoint_id}/openai/v1`. */
describe("the openai SDK against the real CLI", () => {
  let cli: RunningCli;
  let rec: Recorder;
  let client: OpenAI;
  beforeAll(async () => {
    cli = await startCli(["--config", configFile]);
    // The openai client's exchanges with minipod, recorded by `npm run contracts:record`.
    rec = await recorder(cli.url, { client: "openai (JavaScript) on a queue endpoint's OpenAI-compatible routes", test: "test/e2e/openai-sdk.test.ts", clock: "auto", config });
    rec.scenario("openai-queue-routes", { about: "models, chat completions (whole and streamed, with usage), max_tokens, stop, tools, completions, embeddings, an unknown model" });
    client = new OpenAI({ apiKey: "any-key", baseURL: `${rec.url}/v2/llm/openai/v1` });
  });
  afterAll(async () => {
    await rec?.close();
    expect(await cli.stop("SIGINT")).toBe(0);
  });

  const messages = [{ role: "user" as const, content: "Name three queue states." }];

  it("lists the endpoint's models", async () => {
    const models = [];
    for await (const m of client.models.list()) models.push(m.id);
    expect(models).toEqual(["org/tiny-model"]);
    expect((await client.models.retrieve("org/tiny-model")).owned_by).toBe("minipod");
  });

  it("creates a chat completion, and streams the same text token by token with usage", async () => {
    const completion = await client.chat.completions.create({ model: "org/tiny-model", messages });
    const text = completion.choices[0]!.message.content!;
    expect(text.split(" ")).toHaveLength(12);
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.usage).toEqual({ prompt_tokens: 4, completion_tokens: 12, total_tokens: 16 });
    expect(completion.id).toMatch(/^chatcmpl-sync-/);

    const stream = await client.chat.completions.create({ model: "org/tiny-model", messages, stream: true, stream_options: { include_usage: true } });
    const deltas: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const delta = chunk.choices[0]?.delta.content;
      if (delta) deltas.push(delta);
    }
    expect(deltas).toHaveLength(12);
    expect(deltas.join("")).toBe(text);
    expect(usage).toEqual(completion.usage);
  });

  it("honours max_tokens and stop, and calls tools", async () => {
    const short = await client.chat.completions.create({ model: "org/tiny-model", messages, max_tokens: 3 });
    expect(short.choices[0]!.finish_reason).toBe("length");
    expect(short.choices[0]!.message.content!.split(" ")).toHaveLength(3);
    const whole = (await client.chat.completions.create({ model: "org/tiny-model", messages })).choices[0]!.message.content!;
    const stopped = await client.chat.completions.create({ model: "org/tiny-model", messages, stop: ["."] });
    expect(stopped.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: whole.slice(0, -1) } });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } } }];
    const called = await client.chat.completions.create({ model: "org/tiny-model", messages, tools });
    const call = called.choices[0]!.message.tool_calls![0]!;
    expect(called.choices[0]!.finish_reason).toBe("tool_calls");
    expect(call.type === "function" && JSON.parse(call.function.arguments)).toEqual({ id: "example id" });
  });

  it("completes text and embeds (the SDK asks for base64 and decodes it)", async () => {
    const completion = await client.completions.create({ model: "org/tiny-model", prompt: "Once upon a time", max_tokens: 5 });
    expect(completion.choices[0]!.text.trim().split(" ")).toHaveLength(5);
    expect(completion.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 5 });

    const embedded = await client.embeddings.create({ model: "org/tiny-model", input: ["minipod", "queue"] });
    expect(embedded.data.map((d) => d.embedding.length)).toEqual([24, 24]);
    const floats = await client.embeddings.create({ model: "org/tiny-model", input: "minipod", encoding_format: "float" });
    expect(floats.data[0]!.embedding).toEqual(embedded.data[0]!.embedding);
  });

  it("shows an error's message and status: an unknown model is a NotFoundError", async () => {
    const err = await client.chat.completions.create({ model: "gpt-4o", messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).status).toBe(404);
    expect((err as Error).message).toBe("404 The model `gpt-4o` does not exist. This endpoint serves org/tiny-model.");
    const unknown = await new OpenAI({ apiKey: "k", baseURL: `${rec.url}/v2/nope/openai/v1` }).models.list().catch((e: unknown) => e);
    expect((unknown as Error).message).toMatch(/^404 endpoint "nope" not found; the endpoints are "llm"/);
  });

  it("a request past the bounds is a BadRequestError naming the field, and the process stays up", async () => {
    rec.pause(); // the rest is about bounds, faults and retries, not what a client accepts
    const err = await client.embeddings.create({ model: "org/tiny-model", input: Array(100).fill("a"), dimensions: 65_536 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("dimensions");
    expect((err as Error).message).toBe("400 'dimensions' must be an integer from 1 to 8192");
    const many = await client.embeddings.create({ model: "org/tiny-model", input: Array(10_000).fill("a") }).catch((e: unknown) => e);
    expect((many as Error).message).toMatch(/^400 Invalid 'input': array too long/);
    const stream = await client.chat.completions.create({ model: "org/tiny-model", messages, stream: true, max_tokens: 10_000_000 }).catch((e: unknown) => e);
    expect(stream).toBeInstanceOf(OpenAI.BadRequestError);
    expect((stream as Error).message).toMatch(/^400 This model's maximum context length is 32768 tokens\. However, you requested 10000005 tokens/);
    // At the bound, answered whole: 2,048 vectors of 64 numbers, base64 as the SDK asks.
    const at = await client.embeddings.create({ model: "org/tiny-model", input: Array.from({ length: 2048 }, (_, i) => `t${i}`), dimensions: 64 });
    expect(at.data).toHaveLength(2048);
    expect(at.data[2047]!.embedding).toHaveLength(64);
    expect((await fetch(`${cli.url}/v2/llm/health`, { headers: { authorization: "Bearer k" } })).status).toBe(200);
  });

  it("gets a 429 with Retry-After: a RateLimitError, or a retry that succeeds", async () => {
    const addFault = (times: number) =>
      fetch(`${cli.url}/_emulator/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ endpoint: "llm", operation: "openai", fault: { type: "http", status: 429, retryAfter: 1 }, times }),
      });
    await addFault(1);
    const err = await new OpenAI({ apiKey: "k", baseURL: client.baseURL, maxRetries: 0 }).chat.completions.create({ model: "org/tiny-model", messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toBe("1");
    expect((err as Error).message).toMatch(/^429 injected fault/);

    await addFault(1);
    const retried = await client.chat.completions.create({ model: "org/tiny-model", messages }).withResponse();
    expect(retried.response.status).toBe(200);
    const journal = (await (await fetch(`${cli.url}/_emulator/requests?operation=openai&limit=2`)).json()) as { requests: Array<{ status: number }> };
    expect(journal.requests.map((r) => r.status)).toEqual([429, 200]);
  });
});
