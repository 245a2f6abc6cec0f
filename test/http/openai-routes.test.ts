import { afterEach, describe, expect, it } from "vitest";
import type { Handler } from "../../src/index.js";
import { inProcess, type InProcess } from "../support/in-process.js";
import { chunksOf, dataOf, sseReader } from "../support/sse.js";

let e: InProcess;
afterEach(() => e?.close());

const CHAT = "/openai/v1/chat/completions";
const hello = { model: "minipod-llm", messages: [{ role: "user", content: "hello there" }] };

/** A raw in-process request to an OpenAI route, as an SDK sends it. */
const openai = async (path: string, body?: unknown, init: RequestInit = {}): Promise<Response> =>
  e.app.request(`http://minipod.test${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: "Bearer test-key", "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...init,
  });

describe("/v2/{endpoint_id}/openai/*", () => {
  it("runs each request as a job whose input is what the service gives its vLLM worker, and answers its output", async () => {
    const inputs: unknown[] = [];
    const spy: Handler = (input) => {
      inputs.push(input);
      return { object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] };
    };
    e = await inProcess({ config: { endpoints: [{ id: "ep", handler: "spy", workersMin: 1 }] }, handlers: { spy } });
    const res = await openai(`/v2/ep${CHAT}`, hello);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] });
    expect((await openai("/v2/ep/openai/v1/models")).status).toBe(200);
    expect(inputs).toEqual([
      { openai_route: "/v1/chat/completions", openai_input: hello },
      { openai_route: "/v1/models", openai_input: {} },
    ]);
    // A sync job of the endpoint: listed, with a status, a timeline naming the route, and journaled as "openai".
    const listed = (await e.get("/v2/ep/requests")).body.requests;
    expect(listed).toHaveLength(2);
    const id = listed[1].id as string;
    expect(id).toMatch(/^sync-/);
    expect((await e.get(`/v2/ep/status/${id}`)).body).toMatchObject({ status: "COMPLETED", output: { object: "chat.completion" } });
    expect((await e.get(`/_emulator/jobs/${id}/events`)).body.events[0].cause).toBe("submitted with POST /openai/v1/chat/completions");
    expect(e.core.observe.requests({ operation: "openai" }).requests.map((r) => r.status)).toEqual([200, 200]);
  });

  it("unwraps a one-item list (a generator's aggregated output), and never answers from what the job streamed", async () => {
    const aggregated: Handler = async function* () {
      yield { object: "list", data: [] };
    };
    const streamedOnly: Handler = async function* () {
      yield { object: "list", data: [{ id: "m" }] };
      return [];
    };
    e = await inProcess({ config: { endpoints: [{ id: "a", handler: "aggregated", workersMin: 1 }, { id: "s", handler: "streamedOnly", workersMin: 1 }] }, handlers: { aggregated, streamedOnly } });
    expect(await (await openai("/v2/a/openai/v1/models")).json()).toEqual({ object: "list", data: [] });
    // A generator that leaves `[]` (a worker without return_aggregate_stream): its yields were
    // streamed, but a plain request is answered from the output, as the service's vLLM worker's is.
    const res = await openai("/v2/s/openai/v1/models");
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("return_aggregate_stream");
  });

  it("holds a plain request on the virtual clock until its job ends, cold start included", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "llm", handler: "openai", workersMin: 0, coldStartMs: 2000, openai: { tokenDelayMs: 100, replyTokens: 5 } }] } });
    let answered = false;
    const pending = openai(`/v2/llm${CHAT}`, hello).then((r) => ((answered = true), r));
    await e.advance(2000 + 499);
    expect(answered).toBe(false);
    await e.advance(1);
    const res = await pending;
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content.split(" ")).toHaveLength(5);
    const [job] = (await e.get("/v2/llm/requests")).body.requests;
    expect(job).toMatchObject({ status: "COMPLETED", delayTime: 2000, executionTime: 500 });
  });
});

describe("streamed answers", () => {
  it("sends each chunk as the handler yields it, on the virtual clock, and ends with data: [DONE]", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "llm", handler: "openai", workersMin: 1, openai: { tokenDelayMs: 100, reply: "one two three" } }] } });
    const res = await openai(`/v2/llm${CHAT}`, { ...hello, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const sse = sseReader(res);
    await sse.next(); // the role chunk comes at once
    expect(chunksOf(sse.text).map((c) => c.choices[0].delta)).toEqual([{ role: "assistant", content: "" }]);
    let arrived = false;
    const next = sse.next().then(() => (arrived = true));
    await e.advance(99);
    expect(arrived).toBe(false);
    await e.advance(1);
    await next;
    expect(chunksOf(sse.text).at(-1)!.choices[0].delta).toEqual({ content: "one" });
    await e.advance(200);
    const text = await sse.rest();
    expect(chunksOf(text).map((c) => c.choices[0].delta.content ?? null)).toEqual(["", "one", " two", " three", null]);
    expect(chunksOf(text).at(-1)!.choices[0].finish_reason).toBe("stop");
    expect(dataOf(text).at(-1)).toBe("[DONE]");
    expect(dataOf(text).filter((d) => d === "[DONE]")).toHaveLength(1);
  });

  it("relays a vLLM worker's raw SSE text as it is and its chunk lists event by event, with one [DONE]", async () => {
    const chunk = (content: string) => ({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] });
    const raw: Handler = async function* () {
      yield `data: ${JSON.stringify(chunk("a"))}\n\ndata: ${JSON.stringify(chunk("b"))}\n\n`;
      yield `data: ${JSON.stringify(chunk("c"))}\n\ndata: [DONE]\n\n`;
    };
    const lists: Handler = async function* () {
      yield [chunk("a"), chunk("b")];
      yield [chunk("c")];
    };
    e = await inProcess({ config: { endpoints: [{ id: "raw", handler: "raw", workersMin: 1 }, { id: "lists", handler: "lists", workersMin: 1 }] }, handlers: { raw, lists } });
    for (const ep of ["raw", "lists"]) {
      const text = await sseReader(await openai(`/v2/${ep}${CHAT}`, { ...hello, stream: true })).rest();
      expect(chunksOf(text).map((c) => c.choices[0].delta.content), ep).toEqual(["a", "b", "c"]);
      expect(dataOf(text).filter((d) => d === "[DONE]"), ep).toHaveLength(1);
      expect(dataOf(text).at(-1), ep).toBe("[DONE]");
    }
  });

  it("turns a whole completion from a handler that does not stream into chunks", async () => {
    e = await inProcess({
      config: { endpoints: [{ id: "p", handler: "plain", workersMin: 1 }] },
      handlers: {
        plain: () => ({
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content: "whole" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      },
    });
    const text = await sseReader(await openai(`/v2/p${CHAT}`, { ...hello, stream: true })).rest();
    const chunks = chunksOf(text);
    expect(chunks[0]).toMatchObject({ id: "x", object: "chat.completion.chunk", choices: [{ index: 0, delta: { role: "assistant", content: "whole" }, finish_reason: "stop" }] });
    expect(chunks[1]).toMatchObject({ choices: [], usage: { total_tokens: 2 } });
    expect(dataOf(text).at(-1)).toBe("[DONE]");
  });

  it("rebuilds an output split into 1 MB stream items before relaying it", async () => {
    const big = "x".repeat(1_500_000);
    const bulky: Handler = async function* () {
      yield `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: big } }] })}\n\n`;
    };
    e = await inProcess({ config: { endpoints: [{ id: "b", handler: "bulky", workersMin: 1 }] }, handlers: { bulky } });
    const text = await sseReader(await openai(`/v2/b${CHAT}`, { ...hello, stream: true })).rest();
    expect(chunksOf(text)[0]!.choices[0].delta.content).toBe(big);
  });

  it("gives an error the handler reports before streaming its own status, and one after as an error event", async () => {
    const late: Handler = async function* (_input, ctx) {
      yield { object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "a" } }] };
      await ctx.sleep(10);
      throw new Error("GPU fell off the bus");
    };
    e = await inProcess({ config: { endpoints: [{ id: "llm", handler: "openai", workersMin: 1 }, { id: "late", handler: "late", workersMin: 1 }] }, handlers: { late } });
    const early = await openai(`/v2/llm${CHAT}`, { ...hello, model: "gpt-9", stream: true });
    expect(early.status).toBe(404);
    expect(early.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await early.json()) as { error: unknown }).error).toMatchObject({ type: "NotFoundError", code: 404, message: expect.stringContaining("gpt-9") });
    const res = await openai(`/v2/late${CHAT}`, { ...hello, stream: true });
    expect(res.status).toBe(200);
    const sse = sseReader(res);
    await sse.next();
    await e.advance(10);
    const text = await sse.rest();
    expect(dataOf(text)).toHaveLength(2);
    expect(JSON.parse(dataOf(text)[1]!)).toEqual({ error: { message: "GPU fell off the bus", type: "server_error", param: null, code: null } });
  });

  it("cancels the job and frees its concurrency slot when the client goes away", async () => {
    const forever: Handler = async function* (_input, ctx) {
      yield { object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "a" } }] };
      await ctx.sleep(3_600_000);
    };
    e = await inProcess({ config: { endpoints: [{ id: "f", handler: "forever", workersMin: 0, workersMax: 500, coldStartMs: 0 }] }, handlers: { forever } });
    const open = await Promise.all(Array.from({ length: 400 }, () => openai(`/v2/f${CHAT}`, { ...hello, stream: true })));
    expect(open.every((r) => r.status === 200)).toBe(true);
    const refused = await openai(`/v2/f${CHAT}`, { ...hello, stream: true });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: { message: expect.stringMatching(/concurrency limit exceeded for \/openai .*400 requests at once/), type: "rate_limit_error", param: null, code: "rate_limit_exceeded" },
    });
    expect(refused.headers.get("retry-after")).toBe("1");

    const first = sseReader(open[0]!);
    await first.next();
    await first.cancel();
    await e.advance(0);
    const cancelled = (await e.get("/v2/f/requests?limit=100&status=CANCELLED")).body.requests;
    expect(cancelled).toHaveLength(1);
    expect((await e.get(`/_emulator/jobs/${cancelled[0].id}/events`)).body.events.at(-1).cause).toBe("cancelled: the client of the OpenAI request went away");
    const admitted = await openai(`/v2/f${CHAT}`, { ...hello, stream: true });
    expect(admitted.status).toBe(200);
  });
});

describe("a handler module serving OpenAI routes, as docs/openai.md shows", () => {
  it("answers plain and streamed chat completions, and 404 for another route", async () => {
    const module = new URL("../../fixtures/handlers/openai-chat.ts", import.meta.url).pathname;
    e = await inProcess({ config: { endpoints: [{ id: "mine", handler: module, workersMin: 1 }] } });
    const plain = await openai(`/v2/mine${CHAT}`, hello);
    expect(((await plain.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("hi there");
    // Nothing is sent before the first chunk, 50 virtual ms in.
    const res = openai(`/v2/mine${CHAT}`, { ...hello, stream: true });
    await e.advance(100);
    const text = await sseReader(await res).rest();
    expect(chunksOf(text).map((c) => c.choices[0].delta.content ?? "").join("")).toBe("hi there");
    expect(dataOf(text).at(-1)).toBe("[DONE]");
    const other = await openai("/v2/mine/openai/v1/embeddings", { input: "x" });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ error: { message: "no route /v1/embeddings", type: "NotFoundError", param: null, code: 404 } });
    const otherStreamed = await openai("/v2/mine/openai/v1/embeddings", { input: "x", stream: true });
    expect(otherStreamed.status).toBe(404);
  });
});
