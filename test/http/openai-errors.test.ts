import { afterEach, describe, expect, it } from "vitest";
import type { Handler } from "../../src/index.js";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const CHAT = "/openai/v1/chat/completions";
const hello = { messages: [{ role: "user", content: "hello" }] };

describe("errors on the OpenAI routes", () => {
  it("are OpenAI error objects for minipod's own refusals (401, 404, 400, 405), problem+json elsewhere", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "llm", handler: "openai", workersMin: 1 }], auth: { keys: [{ key: "test-key" }] } } });
    const noKey = await e.post(`/v2/llm${CHAT}`, hello, { authorization: "" });
    expect(noKey.status).toBe(401);
    expect(noKey.headers.get("content-type")).toMatch(/^application\/json/);
    expect(noKey.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(noKey.body).toEqual({ error: { message: expect.stringContaining("missing API key"), type: "authentication_error", param: null, code: "invalid_api_key" } });
    expect((await e.post(`/v2/llm${CHAT}`, hello, { authorization: "Bearer wrong" })).body.error.code).toBe("invalid_api_key");

    const unknown = await e.post(`/v2/nope${CHAT}`, hello);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { message: expect.stringMatching(/^endpoint "nope" not found; the endpoints are /), type: "not_found_error", param: null, code: "endpoint_not_found" } });

    for (const body of ["{not json", "[1, 2]"]) {
      const bad = await e.post(`/v2/llm${CHAT}`, body);
      expect(bad.status, body).toBe(400);
      expect(bad.body, body).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringMatching(/JSON|body is invalid/) } });
    }
    const put = await e.request("PUT", `/v2/llm${CHAT}`, hello);
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toContain("POST");
    expect(put.body).toMatchObject({ error: { code: "method_not_allowed" } });

    const elsewhere = await e.get("/v2/llm/status/nope");
    expect(elsewhere.headers.get("content-type")).toBe("application/problem+json");
    expect(elsewhere.body).toMatchObject({ title: "Not Found", status: 404 });
  });

  it("applies the specification's rate for /openai/* (2000 per 10 s) with a 429 the SDKs read, and injected faults", async () => {
    e = await inProcess({ clock: { mode: "manual", start: Date.UTC(2026, 0, 1) }, config: { endpoints: [{ id: "llm", handler: "echo", workersMin: 1, workersMax: 1 }] } });
    const models = { input: "x" };
    for (let i = 0; i < 2000; i++) {
      const res = await e.post("/v2/llm/openai/v1/embeddings", models);
      if (res.status !== 200) throw new Error(`request ${i}: ${res.status} ${res.text}`);
    }
    const limited = await e.post("/v2/llm/openai/v1/embeddings", models);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("10");
    expect(limited.body).toEqual({ error: { message: expect.stringContaining("2000 requests per 10 s"), type: "rate_limit_error", param: null, code: "rate_limit_exceeded" } });
    expect((await e.get("/v2/llm/openai/v1/models")).status).toBe(200); // GET is not in the table
    await e.advance(10_000);
    expect((await e.post("/v2/llm/openai/v1/embeddings", models)).status).toBe(200);

    e.core.faults.add({ endpoint: "llm", operation: "openai", fault: { type: "http", status: 503, retryAfter: 2 }, times: 1 });
    const injected = await e.post("/v2/llm/openai/v1/embeddings", models);
    expect(injected.status).toBe(503);
    expect(injected.headers.get("retry-after")).toBe("2");
    expect(injected.body).toMatchObject({ error: { type: "server_error", message: expect.stringContaining("injected fault") } });
  });

  it("answers a handler's error object with its status, a failure with 500, a timeout with 504, a cancel with 400", async () => {
    const outputs: Record<string, unknown> = {
      "/v1/new": { error: { message: "not processable", type: "UnprocessableEntity", param: null, code: 422 } },
      "/v1/flat": { object: "error", message: "old vLLM", type: "BadRequestError", param: null, code: 400 },
      "/v1/text": { error: "vLLM engine not initialized" },
      "/v1/none": null,
    };
    const scriptedErrors: Handler = async (input, ctx) => {
      const route = input.openai_route as string;
      if (route === "/v1/raise") throw new Error("CUDA out of memory");
      // What the service's Python library reports when a generator yields an error object.
      if (route === "/v1/python") throw new Error("{'message': 'The model `x` does not exist.', 'type': 'NotFoundError', 'param': None, 'code': 404}");
      if (route === "/v1/slow") await ctx.sleep(60_000);
      return outputs[route];
    };
    e = await inProcess({ config: { endpoints: [{ id: "h", handler: "scriptedErrors", workersMin: 1, executionTimeoutMs: 5000 }] }, handlers: { scriptedErrors } });
    const call = (route: string) => e.post(`/v2/h/openai${route}`, {});
    expect(await call("/v1/new")).toMatchObject({ status: 422, body: { error: { message: "not processable", type: "UnprocessableEntity", code: 422 } } });
    expect(await call("/v1/flat")).toMatchObject({ status: 400, body: { error: { message: "old vLLM", type: "BadRequestError", code: 400 } } });
    expect(await call("/v1/text")).toMatchObject({ status: 500, body: { error: { message: "vLLM engine not initialized", type: "server_error" } } });
    expect(await call("/v1/none")).toMatchObject({ status: 500, body: { error: { message: "the endpoint's handler returned no output for /v1/none" } } });
    expect(await call("/v1/raise")).toMatchObject({ status: 500, body: { error: { message: "CUDA out of memory", type: "server_error" } } });
    expect(await call("/v1/python")).toMatchObject({ status: 404, body: { error: { message: "The model `x` does not exist.", type: "NotFoundError", code: 404 } } });

    const slow = call("/v1/slow");
    await e.advance(5000);
    expect(await slow).toMatchObject({ status: 504, body: { error: { message: "job exceeded its execution timeout of 5000 ms", code: "job_timed_out" } } });

    const cancelled = call("/v1/slow");
    await e.advance(0);
    const [job] = (await e.get("/v2/h/requests?status=IN_PROGRESS")).body.requests;
    await e.post(`/v2/h/cancel/${job.id}`);
    expect(await cancelled).toMatchObject({ status: 400, body: { error: { code: "job_cancelled", message: expect.stringContaining(job.id) } } });
    // Always the four fields of OpenAI's error object.
    for (const route of Object.keys(outputs)) expect(Object.keys((await call(route)).body.error), route).toEqual(["message", "type", "param", "code"]);
  });

  it("keeps job faults: a crashed worker's job goes back to the queue and still answers", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "llm", handler: "openai", workersMin: 1, coldStartMs: 1000, openai: { tokenDelayMs: 0 } }] } });
    e.core.faults.add({ endpoint: "llm", fault: { type: "worker-crash" }, times: 1 });
    const pending = e.post(`/v2/llm${CHAT}`, hello);
    await e.advance(1000); // a new worker replaces the crashed one
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.object).toBe("chat.completion");
    expect((await e.get("/v2/llm/requests")).body.requests[0]).toMatchObject({ status: "COMPLETED", retries: 1 });
  });
});
