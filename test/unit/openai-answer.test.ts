import { describe, expect, it } from "vitest";
import { SplitOutputs, completedAnswer, resultValue, sseText, streamOfWhole } from "../../src/domain/openai/answer.js";
import { failureAnswer, handlerError } from "../../src/domain/openai/protocol.js";
import { splitStreamOutput } from "../../src/domain/stream-chunks.js";
import { dataOf } from "../support/sse.js";

describe("what a handler's output answers on an OpenAI route", () => {
  it("reads error objects in OpenAI's form, vLLM's older flat form, and as text", () => {
    expect(handlerError({ error: { message: "m", type: "NotFoundError", param: null, code: 404 } })).toEqual({
      status: 404,
      body: { error: { message: "m", type: "NotFoundError", param: null, code: 404 } },
    });
    expect(handlerError({ object: "error", message: "m", type: "BadRequestError", param: "n", code: 400 })).toEqual({
      status: 400,
      body: { error: { message: "m", type: "BadRequestError", param: "n", code: 400 } },
    });
    expect(handlerError({ error: { message: "m", code: "model_not_found" } })).toMatchObject({ status: 400, body: { error: { code: "model_not_found", type: "invalid_request_error" } } });
    expect(handlerError({ error: "engine down" })).toMatchObject({ status: 500, body: { error: { message: "engine down", type: "server_error" } } });
    for (const fine of [{ object: "chat.completion" }, { error: null }, { error: "" }, "text", [1], null]) expect(handlerError(fine)).toBeUndefined();
  });

  it("reads a FAILED job's error: JSON, the Python library's reports, or plain text", () => {
    expect(failureAnswer('{"error": {"message": "m", "code": 429}}')).toMatchObject({ status: 429, body: { error: { message: "m" } } });
    expect(failureAnswer(JSON.stringify({ error_type: "<class 'ValueError'>", error_message: "bad value", error_traceback: "..." }))).toMatchObject({
      status: 500,
      body: { error: { message: "bad value" } },
    });
    expect(failureAnswer("{'message': \"it's gone\", 'type': 'NotFoundError', 'param': None, 'code': 404}")).toMatchObject({
      status: 404,
      body: { error: { message: "it's gone", type: "NotFoundError", code: 404 } },
    });
    expect(failureAnswer("handler: boom \ntraceback: ...")).toEqual({ status: 500, body: { error: { message: "handler: boom \ntraceback: ...", type: "server_error", param: null, code: null } } });
  });

  it("takes a job's output, never what it streamed, and unwraps a list of one", () => {
    expect(resultValue([{ a: 1 }])).toEqual({ a: 1 });
    expect(resultValue({ a: 1 })).toEqual({ a: 1 });
    expect(resultValue([1, 2])).toEqual([1, 2]);
    expect(resultValue([])).toEqual([]);
    expect(resultValue(undefined)).toBeUndefined();
  });

  it("refuses to answer a plain request from an empty list: a generator without return_aggregate_stream", () => {
    expect(completedAnswer([], "/v1/chat/completions")).toMatchObject({ status: 500, body: { error: { message: expect.stringContaining("return_aggregate_stream") } } });
    expect(completedAnswer(undefined, "/v1/x")).toMatchObject({ status: 500, body: { error: { message: "the endpoint's handler returned no output for /v1/x" } } });
    expect(completedAnswer({ object: "chat.completion" }, "/v1/x")).toEqual({ status: 200, body: { object: "chat.completion" } });
  });

  it("relays SSE text as it is, and sends anything else as data events", () => {
    expect(sseText("data: {}\n\n")).toBe("data: {}\n\n");
    expect(sseText("data: {}")).toBe("data: {}\n\n");
    expect(sseText(": keep-alive\n")).toBe(": keep-alive\n\n");
    expect(sseText({ a: 1 })).toBe('data: {"a":1}\n\n');
    expect(sseText("plain words")).toBe('data: "plain words"\n\n');
    expect(sseText([{ a: 1 }, "data: [DONE]\n\n"])).toBe('data: {"a":1}\n\ndata: [DONE]\n\n');
    expect(sseText({ object: "error", message: "m", code: 400 })).toBe('data: {"error":{"message":"m","type":"invalid_request_error","param":null,"code":400}}\n\n');
  });

  it("turns a whole completion into the chunks a streaming server sends", () => {
    const chat = streamOfWhole({
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "t", type: "function", function: { name: "f", arguments: "{}" } }] }, finish_reason: "tool_calls" }],
    });
    expect(dataOf(chat).map((d) => JSON.parse(d))).toEqual([
      {
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [
          {
            index: 0,
            delta: { role: "assistant", content: null, tool_calls: [{ index: 0, id: "t", type: "function", function: { name: "f", arguments: "{}" } }] },
            logprobs: null,
            finish_reason: "tool_calls",
          },
        ],
      },
    ]);
    const text = streamOfWhole({ id: "t", object: "text_completion", choices: [{ index: 0, text: "hi", finish_reason: "length" }], usage: { total_tokens: 3 } });
    expect(dataOf(text).map((d) => JSON.parse(d).choices)).toEqual([[{ index: 0, text: "hi", logprobs: null, finish_reason: "length" }], []]);
    expect(streamOfWhole({ other: true })).toBe('data: {"other":true}\n\n');
  });

  it("rebuilds outputs split into 1 MB stream items", () => {
    const split = new SplitOutputs();
    const big = { text: "y".repeat(2_500_000) };
    const items = splitStreamOutput(big);
    expect(items.length).toBeGreaterThan(2);
    const taken = items.map((item) => split.take(item));
    expect(taken.slice(0, -1).every((t) => t === SplitOutputs.NOT_YET)).toBe(true);
    expect(taken.at(-1)).toEqual(big);
    expect(split.take({ output: "small" })).toBe("small");
  });
});
