/**
 * The ceiling of minipod's stack: Hono on @hono/node-server (the same versions minipod uses),
 * answering the same JSON as minipod's /run, /status and /health with no work beyond reading the
 * request body, and a bare SSE route: an OpenAI chat completion streamed as minipod's `openai`
 * handler streams it (`max_tokens` content chunks of the same shape, then `data: [DONE]`), with
 * no job behind it. Usage: node --import tsx bench/servers/bare.ts PORT
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const JOB_ACK = { id: "3f1c2a8e-1b2c-4d5e-9f00-112233445566-u1", status: "IN_QUEUE" };
const JOB_VIEW = { id: JOB_ACK.id, status: "COMPLETED", delayTime: 0, executionTime: 0, output: { prompt: "hello" }, workerId: "a1b2c3d4e5f6g7" };
const HEALTH = {
  jobs: { completed: 0, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
  workers: { idle: 3, initializing: 0, ready: 3, running: 0, throttled: 0, unhealthy: 0 },
};

const app = new Hono();
app.post("/v2/:endpoint/run", async (c) => {
  await c.req.json();
  return c.json(JOB_ACK, 200);
});
app.get("/v2/:endpoint/status/:id", (c) => c.json({ ...JOB_VIEW, id: c.req.param("id") }, 200));
app.get("/v2/:endpoint/health", (c) => c.json(HEALTH, 200));

/**
 * The events of a streamed chat completion of `tokens` words, each its own `data:` event, read by
 * the response body one event per pull, as minipod's body reads its stream.
 */
function chatStream(tokens: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const head = { id: "chatcmpl-sync-3f1c2a8e-1b2c-4d5e-9f00-112233445566-u1", object: "chat.completion.chunk", created: 1767225600, model: "minipod-llm" };
  const event = (delta: object, finish: string | null) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  let i = -1;
  return new ReadableStream({
    pull(controller) {
      if (i === -1) controller.enqueue(encoder.encode(event({ role: "assistant", content: "" }, null)));
      else if (i < tokens) controller.enqueue(encoder.encode(event({ content: i === 0 ? "Queue" : " queue" }, null)));
      else if (i === tokens) controller.enqueue(encoder.encode(event({}, "stop") + "data: [DONE]\n\n"));
      else controller.close();
      i++;
    },
  });
}
app.post("/v2/:endpoint/openai/v1/chat/completions", async (c) => {
  const body = (await c.req.json()) as { max_tokens?: number };
  return new Response(chatStream(body.max_tokens ?? 16), { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "transfer-encoding": "chunked" } });
});

serve({ fetch: app.fetch, port: Number(process.argv[2]), hostname: "127.0.0.1" });
process.on("SIGTERM", () => process.exit(0));
