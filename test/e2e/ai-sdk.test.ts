import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRunpod } from "@runpod/ai-sdk-provider";
import { APICallError, generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startCli, type RunningCli } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "minipod-ai-sdk-"));
const configFile = join(dir, "emulator.config.json");
writeFileSync(
  configFile,
  JSON.stringify({
    endpoints: [
      { id: "qwen3-32b", handler: "openai", workersMin: 1, coldStartMs: 0, openai: { models: ["Qwen/Qwen3-32B-AWQ"], tokenDelayMs: 2, replyTokens: 10 } },
      { id: "parrot", handler: "echo", workersMin: 1, coldStartMs: 0, openai: { models: ["parrot"], tokenDelayMs: 1 } },
    ],
  }),
);

/**
 * `@runpod/ai-sdk-provider` with `ai`, unchanged. The provider builds
 * `https://api.runpod.ai/v2/{endpoint}/openai/v1` itself; `baseURL` points it at minipod instead.
 */
describe("the AI SDK with the Runpod provider against the real CLI", () => {
  let cli: RunningCli;
  const runpod = (endpoint: string) => createRunpod({ apiKey: "any-key", baseURL: `${cli.url}/v2/${endpoint}/openai/v1` });
  beforeAll(async () => {
    cli = await startCli(["--config", configFile]);
  });
  afterAll(async () => {
    expect(await cli.stop("SIGINT")).toBe(0);
  });

  it("generateText and streamText give the same deterministic text, with usage", async () => {
    const model = runpod("qwen3-32b")("Qwen/Qwen3-32B-AWQ");
    const generated = await generateText({ model, prompt: "Say something about queues." });
    expect(generated.text.split(" ")).toHaveLength(10);
    expect(generated.finishReason).toBe("stop");
    expect(generated.usage).toMatchObject({ inputTokens: 4, outputTokens: 10, totalTokens: 14 });

    const streamed = streamText({ model, prompt: "Say something about queues." });
    const parts: string[] = [];
    for await (const part of streamed.textStream) parts.push(part);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join("")).toBe(generated.text);
    // The provider asks for stream_options.include_usage by itself.
    expect(await streamed.usage).toMatchObject({ inputTokens: 4, outputTokens: 10 });
    expect(await streamed.finishReason).toBe("stop");
  });

  it("runs a tool-calling loop: the model calls the tool, gets its result, then answers", async () => {
    const seen: unknown[] = [];
    const result = await generateText({
      model: runpod("qwen3-32b")("Qwen/Qwen3-32B-AWQ"),
      prompt: "What is the weather in Oslo?",
      tools: {
        weather: tool({
          description: "Weather for a city",
          inputSchema: z.object({ city: z.string(), days: z.number().int().min(1) }),
          execute: async (args) => {
            seen.push(args);
            return { temperature: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(seen).toEqual([{ city: "example city", days: 1 }]);
    expect(result.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(result.text.length).toBeGreaterThan(0);
  });

  it("an echo endpoint streams the prompt back", async () => {
    const streamed = streamText({ model: runpod("parrot")("parrot"), prompt: "repeat these exact words" });
    let text = "";
    for await (const part of streamed.textStream) text += part;
    expect(text).toBe("repeat these exact words");
  });

  it("surfaces the endpoint's error message: a model the endpoint does not serve", async () => {
    const err = await generateText({ model: runpod("qwen3-32b")("gpt-4o"), prompt: "hi", maxRetries: 0 }).catch((e: unknown) => e);
    expect(APICallError.isInstance(err)).toBe(true);
    expect((err as APICallError).statusCode).toBe(404);
    expect((err as APICallError).message).toBe("The model `gpt-4o` does not exist. This endpoint serves Qwen/Qwen3-32B-AWQ.");
  });
});
