import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

const PYTHON = "/usr/bin/python3";
const VENDOR = new URL("../../vendor/python/", import.meta.url).pathname;
const PYTHONPATH = `${join(VENDOR, "runpod-python")}:${join(VENDOR, "stubs")}`;

/** Whether the service's Python library can run here; with CI=true its absence is an error. */
function pythonReady(): boolean {
  const ok = existsSync(PYTHON) && spawnSync(PYTHON, ["-c", "import runpod.serverless"], { env: { ...process.env, PYTHONPATH } }).status === 0;
  if (ok) return true;
  if (process.env.CI === "true") throw new Error(`${PYTHON} cannot import the service's Python library (vendor/python): .ci/run installs its Debian packages`);
  console.warn("Python worker tests skipped: /usr/bin/python3 with the vendor/python library's Debian packages is missing");
  return false;
}

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

const ready = pythonReady();

/**
 * The service's Python library (vendor/python, unchanged) runs the worker, configured as the real
 * platform configures it; the openai SDK calls minipod, which hands the requests to the worker.
 *
 * Marked `fails` while minipod's worker routes do not take what this library sends: the worker
 * takes the job (`{openai_route, openai_input}`) and runs the handler, but its outputs go to
 * `job-stream/{worker}/{job}` and `job-done/{worker}/{job}?isStream=true`, which answer 404 today,
 * so the job never ends and the SDK's request times out. Once those routes take them, this test
 * passes and the marker must go.
 */
describe.runIf(ready)("a Python worker process answering OpenAI routes", () => {
  let emu: Emulator;
  let worker: ChildProcess | undefined;
  let log = "";

  beforeAll(async () => {
    emu = await createEmulator({ config: { endpoints: [{ id: "pyllm", handler: "external" }] } });
    const dir = mkdtempSync(join(tmpdir(), "minipod-pyworker-"));
    writeFileSync(join(dir, "handler.py"), HANDLER);
    const base = `${emu.url}/v2/pyllm`;
    worker = spawn(PYTHON, [join(dir, "handler.py")], {
      cwd: dir,
      env: {
        ...process.env,
        PYTHONPATH,
        RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?gpu=local`,
        RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?gpu=local`,
        RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?gpu=local`,
        RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID`,
        RUNPOD_AI_API_KEY: "worker-key",
        RUNPOD_POD_ID: "py-worker-1",
        RUNPOD_ENDPOINT_ID: "pyllm",
        RUNPOD_PING_INTERVAL: "1000",
        RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: "true",
        RUNPOD_SKIP_GPU_CHECK: "true",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    worker.stdout!.on("data", (d: Buffer) => (log += d.toString()));
    worker.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  });
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((r) => worker!.once("exit", r));
      worker.kill("SIGTERM");
      await exited;
    }
    await emu?.close();
  });

  it.fails("answers models, a chat completion, a streamed one and an error through the openai SDK", async () => {
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
      throw new Error(`${(e as Error).message}\nworker requests refused: ${refused.map((r) => `${r.status} ${r.method} ${r.path}`).join("; ")}\nworker log:\n${log.slice(0, 6000)}`, { cause: e });
    }
  }, 30_000);
});
