import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";

/**
 * A worker written the way the service's vLLM worker answers OpenAI routes: it reads
 * `openai_route` and `openai_input`, yields one response object for a plain request, SSE text in
 * batches (`RAW_OPENAI_OUTPUT=1`, its default) for a streamed one, and an error object for a model
 * it does not serve; it runs with `return_aggregate_stream`.
 */
const HANDLER = String.raw`
import json
import runpod

MODEL = "py/vllm-like"
WORDS = ["Hello", " from", " a", " Python", " worker"]

def chunk(delta, finish=None):
    return {"id": "chatcmpl-py", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

async def handler(job):
    route = job["input"].get("openai_route")
    body = job["input"].get("openai_input") or {}
    if route == "/v1/models":
        yield {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "vllm"}]}
        return
    if body.get("model") != MODEL:
        yield {"error": {"message": "The model \x60%s\x60 does not exist." % body.get("model"), "type": "NotFoundError", "param": None, "code": 404}}
        return
    if not body.get("stream"):
        yield {"id": "chatcmpl-py", "object": "chat.completion", "created": 0, "model": MODEL,
               "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(WORDS)}, "logprobs": None, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 1, "completion_tokens": len(WORDS), "total_tokens": 1 + len(WORDS)}}
        return
    events = [chunk({"role": "assistant", "content": ""})] + [chunk({"content": w}) for w in WORDS] + [chunk({}, "stop")]
    text = ["data: " + json.dumps(e) + "\n\n" for e in events] + ["data: [DONE]\n\n"]
    for i in range(0, len(text), 2):
        yield "".join(text[i:i + 2])

runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
`;

const ready = pythonAvailable();

/**
 * The service's Python library (as published, unchanged) runs the worker, started as
 * `minipod worker` starts it (the platform's environment); the openai SDK calls minipod, which
 * hands the requests to the worker as jobs.
 */
describe.runIf(ready)("a Python worker process answering OpenAI routes", () => {
  let emu: Emulator;
  const log: string[] = [];

  beforeAll(async () => {
    emu = await createEmulator({ config: { endpoints: [{ id: "pyllm", handler: "external" }] } });
    const dir = mkdtempSync(join(tmpdir(), "minipod-pyworker-"));
    writeFileSync(join(dir, "handler.py"), HANDLER);
    emu.startWorker({ endpoint: "pyllm", workerId: "py-worker-1", command: [PYTHON, join(dir, "handler.py")], env: pythonEnv(), output: (line) => log.push(line) });
  });
  afterAll(async () => {
    await emu?.close();
  });

  it("answers models, a chat completion, a streamed one and an error through the openai SDK", async () => {
    const client = new OpenAI({ apiKey: "k", baseURL: `${emu.url}/v2/pyllm/openai/v1`, maxRetries: 0, timeout: 10_000 });
    try {
      const models = await client.models.list();
      expect(models.data.map((m) => m.id)).toEqual(["py/vllm-like"]);

      const messages = [{ role: "user" as const, content: "hi" }];
      const completion = await client.chat.completions.create({ model: "py/vllm-like", messages });
      expect(completion.choices[0]!.message.content).toBe("Hello from a Python worker");

      let text = "";
      for await (const chunk of await client.chat.completions.create({ model: "py/vllm-like", messages, stream: true })) text += chunk.choices[0]?.delta.content ?? "";
      expect(text).toBe("Hello from a Python worker");

      const err = await client.chat.completions.create({ model: "gpt-4o", messages }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.NotFoundError);
      expect((err as Error).message).toBe("404 The model `gpt-4o` does not exist.");
    } catch (e) {
      const refused = emu.requests({ endpoint: "pyllm" }).requests.filter((r) => r.status >= 400 && r.operation !== "openai");
      throw new Error(`${(e as Error).message}\nworker requests refused: ${refused.map((r) => `${r.status} ${r.method} ${r.path}`).join("; ")}\nworker log:\n${log.slice(-60).join("\n")}`, {
        cause: e,
      });
    }
  }, 30_000);
});
