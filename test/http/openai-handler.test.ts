import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";
import { chunksOf, dataOf } from "../support/sse.js";

let e: InProcess;
afterEach(() => e?.close());

const START = Date.UTC(2026, 0, 1, 12);
const boot = (openai: Record<string, unknown> = {}, handler = "openai") =>
  inProcess({ clock: { mode: "manual", start: START }, config: { endpoints: [{ id: "llm", handler, workersMin: 1, openai: { tokenDelayMs: 0, ...openai } }] } }).then((x) => (e = x));
const chat = (body: Record<string, unknown>) => e.post("/v2/llm/openai/v1/chat/completions", body);
const say = (content: string, extra: Record<string, unknown> = {}) => chat({ messages: [{ role: "user", content }], ...extra });
const weather = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" }, unit: { enum: ["C", "F"] }, days: { type: "integer", minimum: 1 } }, required: ["city", "unit", "days"] },
  },
};
const clock = { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } };

describe("the built-in openai handler: chat completions", () => {
  it("answers the same request the same way, with usage counted in words and ids from the job", async () => {
    await boot({ replyTokens: 6 });
    const a = (await say("what is a queue")).body;
    const b = (await say("what is a queue")).body;
    const other = (await say("what is a worker")).body;
    expect(a).toMatchObject({ object: "chat.completion", created: START / 1000, model: "minipod-llm", choices: [{ index: 0, message: { role: "assistant" }, logprobs: null, finish_reason: "stop" }] });
    expect(a.id).toMatch(/^chatcmpl-sync-/);
    expect(a.choices[0].message.content).toBe(b.choices[0].message.content);
    expect(a.choices[0].message.content).not.toBe(other.choices[0].message.content);
    expect(a.choices[0].message.content.split(" ")).toHaveLength(6);
    expect(a.usage).toEqual({ prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 });
    const two = (await say("what is a queue", { n: 2 })).body;
    expect(two.choices.map((c: { index: number }) => c.index)).toEqual([0, 1]);
    expect(two.choices[0].message.content).not.toBe(two.choices[1].message.content);
    expect(two.usage.completion_tokens).toBe(12);
  });

  it("honours max_tokens, max_completion_tokens and stop", async () => {
    await boot({ reply: "alpha beta gamma. delta epsilon" });
    expect((await say("x", { max_tokens: 2 })).body.choices[0]).toMatchObject({ message: { content: "alpha beta" }, finish_reason: "length" });
    expect((await say("x", { max_completion_tokens: 3 })).body.choices[0]).toMatchObject({ message: { content: "alpha beta gamma." }, finish_reason: "length" });
    expect((await say("x", { stop: [".", "zeta"] })).body.choices[0]).toMatchObject({ message: { content: "alpha beta gamma" }, finish_reason: "stop" });
    expect((await say("x", { stop: "delta", max_tokens: 2 })).body.choices[0]).toMatchObject({ message: { content: "alpha beta" }, finish_reason: "length" });
    expect((await say("x", { stop: "delta" })).body.usage.completion_tokens).toBe(3);
  });

  it("lets the request script the reply and the token delay under `minipod`", async () => {
    await boot({ tokenDelayMs: 0 });
    expect((await say("x", { minipod: { reply: "scripted words" } })).body.choices[0].message.content).toBe("scripted words");
    let done = false;
    const slow = say("x", { minipod: { reply: "a b c", tokenDelayMs: 1000 } }).then((r) => ((done = true), r));
    await e.advance(2999);
    expect(done).toBe(false);
    await e.advance(1);
    expect((await slow).body.choices[0].message.content).toBe("a b c");
  });

  it("refuses what vLLM refuses: another model (404), no messages or a bad n (400)", async () => {
    await boot({ models: ["org/model-a", "model-b"] });
    expect((await say("x", { model: "model-b" })).body.model).toBe("model-b");
    expect((await say("x")).body.model).toBe("org/model-a");
    expect(await say("x", { model: "gpt-4o" })).toMatchObject({
      status: 404,
      body: { error: { message: "The model `gpt-4o` does not exist. This endpoint serves org/model-a, model-b.", type: "NotFoundError", param: "model", code: 404 } },
    });
    expect(await chat({})).toMatchObject({ status: 400, body: { error: { type: "BadRequestError", param: "messages", code: 400 } } });
    expect(await say("x", { n: 0 })).toMatchObject({ status: 400, body: { error: { param: "n" } } });
  });

  it("calls tools: the scripted calls, the named tool_choice, else the first tool; text once results come back", async () => {
    await boot({ toolCalls: [{ name: "get_time", arguments: { zone: "UTC" } }] });
    const scripted = (await say("what time is it", { tools: [weather, clock] })).body.choices[0];
    expect(scripted.finish_reason).toBe("tool_calls");
    expect(scripted.message.content).toBeNull();
    expect(scripted.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_[0-9a-f]{8}$/), type: "function", function: { name: "get_time", arguments: '{"zone":"UTC"}' } }]);

    const forced = (await say("weather?", { tools: [weather, clock], tool_choice: { type: "function", function: { name: "get_weather" } } })).body.choices[0];
    expect(JSON.parse(forced.message.tool_calls[0].function.arguments)).toEqual({ city: "example city", unit: "C", days: 1 });

    const fromInput = (await say("weather?", { tools: [weather], minipod: { toolCalls: [{ name: "get_weather", arguments: '{"city":"Oslo"}' }] } })).body.choices[0];
    expect(fromInput.message.tool_calls[0].function).toEqual({ name: "get_weather", arguments: '{"city":"Oslo"}' });

    const first = (await say("weather?", { tools: [weather] })).body.choices[0];
    expect(first.message.tool_calls[0].function.name).toBe("get_weather");

    const call = first.message.tool_calls[0];
    const after = await chat({
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: [call] },
        { role: "tool", tool_call_id: call.id, content: '{"temp":21}' },
      ],
      tools: [weather],
    });
    expect(after.body.choices[0]).toMatchObject({ finish_reason: "stop", message: { content: expect.any(String) } });
    expect((await say("weather?", { tools: [weather], tool_choice: "none" })).body.choices[0].finish_reason).toBe("stop");

    const streamed = await e.app.request("http://minipod.test/v2/llm/openai/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ messages: [{ role: "user", content: "weather?" }], tools: [weather], stream: true }),
    });
    const chunks = chunksOf(await streamed.text());
    expect(chunks.map((c) => c.choices[0].finish_reason)).toEqual([null, null, "tool_calls"]);
    expect(chunks[1]!.choices[0].delta.tool_calls).toEqual([{ index: 0, id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_weather", arguments: expect.any(String) } }]);
  });

  it("answers response_format json_schema with JSON that fits the schema", async () => {
    await boot();
    const schema = { type: "object", properties: { name: { type: "string" }, tags: { type: "array", items: { type: "string" } }, ok: { type: "boolean" } }, required: ["name", "tags", "ok"] };
    const res = await say("give me json", { response_format: { type: "json_schema", json_schema: { name: "thing", schema } } });
    expect(JSON.parse(res.body.choices[0].message.content)).toEqual({ name: "example name", tags: ["example tags"], ok: true });
    expect(JSON.parse((await say("json", { response_format: { type: "json_object" } })).body.choices[0].message.content)).toHaveProperty("reply");
  });
});

describe("the built-in openai handler: schemas that ask for too much", () => {
  const nested = (levels: number): Record<string, unknown> => (levels === 0 ? { type: "string" } : { type: "array", minItems: 10, items: nested(levels - 1) });
  const bombs: Array<[string, Record<string, unknown>, string]> = [
    ["eight nested arrays of minItems 10", { response_format: { type: "json_schema", json_schema: { name: "b", schema: nested(8) } } }, "response_format"],
    ["a string of minLength 500,000,000", { response_format: { type: "json_schema", json_schema: { name: "b", schema: { type: "string", minLength: 500_000_000 } } } }, "response_format"],
    [
      "properties that point back to the root",
      {
        response_format: {
          type: "json_schema",
          json_schema: { name: "b", schema: { type: "object", properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { $ref: "#" }])) } },
        },
      },
      "response_format",
    ],
    [
      "a large default repeated by minItems",
      { response_format: { type: "json_schema", json_schema: { name: "b", schema: { type: "array", minItems: 10, items: { type: "array", minItems: 10, items: { default: "x".repeat(20_000) } } } } } },
      "response_format",
    ],
    ["tool parameters of nested arrays", { tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { x: nested(8) } } } }] }, "tools"],
  ];
  for (const [name, extra, param] of bombs) {
    it(`answers 400 naming the field, at once: ${name}`, async () => {
      await boot();
      const started = performance.now();
      const res = await say("x", extra);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: "BadRequestError", param, message: expect.stringMatching(/too large to answer/) });
      // Generous: the unbounded generation took tens of seconds and gigabytes.
      expect(performance.now() - started).toBeLessThan(5_000);
    });
  }

  it("answers 400 to a 1 MB schema whose property names would make gigabytes, and to as many tool calls", async () => {
    await boot();
    const name = "p".repeat(900_000);
    const schema = { type: "array", minItems: 10, items: { type: "array", minItems: 10, items: { type: "object", properties: { [name]: { type: "string" } } } } };
    const res = await say("x", { response_format: { type: "json_schema", json_schema: { name: "b", schema } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: "BadRequestError", code: 400, param: "response_format", message: expect.stringMatching(/more than 100,000 characters/) });
    // 20 scripted calls of a tool whose arguments hold 10,000 characters: one answer's 200,000.
    const tool = { type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string", minLength: 10_000 } } } } };
    const calls = await say("x", { tools: [tool], minipod: { toolCalls: Array.from({ length: 20 }, () => ({ name: "f" })) } });
    expect(calls.status).toBe(400);
    expect(calls.body.error).toMatchObject({ param: "tools", message: expect.stringMatching(/characters/) });
    const fewer = await say("x", { tools: [tool], minipod: { toolCalls: Array.from({ length: 5 }, () => ({ name: "f" })) } });
    expect(fewer.status).toBe(200);
    expect(fewer.body.choices[0].message.tool_calls).toHaveLength(5);
  });

  it("still answers a schema within the bounds in full", async () => {
    await boot();
    const res = await say("x", { response_format: { type: "json_schema", json_schema: { name: "ok", schema: nested(3) } } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.choices[0].message.content).flat(2)).toHaveLength(1000);
  });
});

describe("the built-in openai handler: other routes", () => {
  it("completes text: default 16 tokens, echo, several prompts, streamed", async () => {
    await boot({ replyTokens: 20 });
    const one = (await e.post("/v2/llm/openai/v1/completions", { prompt: "Once upon" })).body;
    expect(one).toMatchObject({ object: "text_completion", choices: [{ index: 0, logprobs: null, finish_reason: "length" }], usage: { prompt_tokens: 2, completion_tokens: 16 } });
    expect(one.id).toMatch(/^cmpl-sync-/);
    const echoed = (await e.post("/v2/llm/openai/v1/completions", { prompt: "Once upon", echo: true, max_tokens: 2 })).body.choices[0].text;
    expect(echoed.startsWith("Once upon")).toBe(true);
    expect((await e.post("/v2/llm/openai/v1/completions", { prompt: ["a", "b"] })).body.choices).toHaveLength(2);
    const streamed = await e.app.request("http://minipod.test/v2/llm/openai/v1/completions", {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ prompt: "Once upon", max_tokens: 3, stream: true }),
    });
    const text = await streamed.text();
    expect(chunksOf(text).map((c) => c.choices[0].finish_reason)).toEqual([null, null, null, "length"]);
    expect(chunksOf(text).map((c) => c.choices[0].text).join("")).toBe(one.choices[0].text.split(" ").slice(0, 3).join(" "));
    expect(dataOf(text).at(-1)).toBe("[DONE]");
  });

  it("embeds deterministically: unit vectors, the configured or requested dimensions, float or base64", async () => {
    await boot({ embeddingDimensions: 8 });
    const res = (await e.post("/v2/llm/openai/v1/embeddings", { input: ["cat", "dog"] })).body;
    expect(res).toMatchObject({ object: "list", model: "minipod-llm", usage: { prompt_tokens: 2, total_tokens: 2 } });
    const [cat, dog] = res.data.map((d: { embedding: number[] }) => d.embedding);
    expect(cat).toHaveLength(8);
    expect(Math.hypot(...cat)).toBeCloseTo(1, 5);
    expect(cat).not.toEqual(dog);
    expect((await e.post("/v2/llm/openai/v1/embeddings", { input: "cat" })).body.data[0].embedding).toEqual(cat);
    expect((await e.post("/v2/llm/openai/v1/embeddings", { input: "cat", dimensions: 3 })).body.data[0].embedding).toHaveLength(3);
    const b64 = (await e.post("/v2/llm/openai/v1/embeddings", { input: "cat", encoding_format: "base64" })).body.data[0].embedding as string;
    const bytes = Buffer.from(b64, "base64");
    expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4))).toEqual(cat);
    expect((await e.post("/v2/llm/openai/v1/embeddings", { input: [] })).status).toBe(400);
  });

  it("lists its models, gives one, and names the routes it serves for any other", async () => {
    await boot({ models: ["a", "b/c"] });
    expect((await e.get("/v2/llm/openai/v1/models")).body).toEqual({
      object: "list",
      data: [
        { id: "a", object: "model", created: START / 1000, owned_by: "minipod" },
        { id: "b/c", object: "model", created: START / 1000, owned_by: "minipod" },
      ],
    });
    expect((await e.get("/v2/llm/openai/v1/models/b%2Fc")).body.id).toBe("b/c");
    expect((await e.get("/v2/llm/openai/v1/models/z")).status).toBe(404);
    const other = await e.post("/v2/llm/openai/v1/audio/speech", {});
    expect(other).toMatchObject({ status: 404, body: { error: { message: expect.stringContaining("this handler serves /v1/chat/completions") } } });
  });

  it("fails a job that is not an OpenAI request, saying what it needs", async () => {
    await boot();
    const job = await e.post("/v2/llm/runsync", { input: { prompt: "hi" } });
    expect(job.body).toMatchObject({ status: "FAILED", error: expect.stringContaining("openai_route") });
    const direct = await e.post("/v2/llm/runsync", { input: { openai_route: "/v1/models", openai_input: {} } });
    expect(direct.body).toMatchObject({ status: "COMPLETED", output: { object: "list" } });
  });
});

describe("echo and scripted given an OpenAI request", () => {
  it("echo replies with the last user message, streamed or not; a plain job still gets its input back", async () => {
    await boot({}, "echo");
    const res = await chat({ messages: [{ role: "system", content: "be brief" }, { role: "user", content: [{ type: "text", text: "repeat after me" }] }] });
    expect(res.body.choices[0].message.content).toBe("repeat after me");
    const streamed = await e.app.request("http://minipod.test/v2/llm/openai/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ messages: [{ role: "user", content: "a b" }], stream: true }),
    });
    expect(
      chunksOf(await streamed.text())
        .map((c) => c.choices[0].delta.content ?? "")
        .join(""),
    ).toBe("a b");
    expect((await e.post("/v2/llm/runsync", { input: { n: 1 } })).body.output).toEqual({ n: 1 });
  });

  it("scripted takes sleepMs, fail, output and stream from the body's `minipod` object, else answers like openai", async () => {
    await boot({}, "scripted");
    expect((await say("x", { minipod: { output: { custom: true } } })).body).toEqual({ custom: true });
    expect(await say("x", { minipod: { fail: "boom" } })).toMatchObject({ status: 500, body: { error: { message: "boom" } } });
    let done = false;
    const later = say("x", { minipod: { sleepMs: 5000 } }).then((r) => ((done = true), r));
    await e.advance(4999);
    expect(done).toBe(false);
    await e.advance(1);
    expect((await later).body.object).toBe("chat.completion");
    const streamed = await e.app.request("http://minipod.test/v2/llm/openai/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ messages: [], stream: true, minipod: { stream: [{ choices: [{ index: 0, delta: { content: "s" } }] }] } }),
    });
    expect(dataOf(await streamed.text())).toEqual(['{"choices":[{"index":0,"delta":{"content":"s"}}]}', "[DONE]"]);
  });
});
