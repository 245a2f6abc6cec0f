import type { VirtualClock } from "../../domain/clock.js";
import { answerOpenAi } from "../../domain/handlers/openai.js";
import type { HandlerContext } from "../../domain/handlers/types.js";
import { LB_HEALTH_PATH_DEFAULT } from "../../domain/limits.js";
import { completedAnswer, DONE_EVENT, sseText, streamOfWhole } from "../../domain/openai/answer.js";
import { handlerError, isRecord } from "../../domain/openai/protocol.js";
import type { OpenAiSettingsOf } from "../../domain/openai/settings.js";

/** A load-balancing endpoint's handler in minipod's process: a Hono app's `fetch` is one. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/**
 * The built-in `echo` worker: `/ping` answers 200 (ready); any other request is answered with what
 * it was: method, path, query and body (JSON when it parses).
 */
export function echoHandler(workerId: () => string): FetchHandler {
  return async (req) => {
    const url = new URL(req.url);
    if (url.pathname === LB_HEALTH_PATH_DEFAULT) return json(200, { status: "healthy" });
    const text = req.body ? await req.text() : "";
    let body: unknown = text;
    try {
      body = text === "" ? null : (JSON.parse(text) as unknown);
    } catch {
      // not JSON: echoed as text
    }
    return json(200, { method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), body, workerId: workerId() });
  };
}

/**
 * The built-in `openai` worker, as a vLLM load balancer is: the OpenAI routes answered directly
 * (`/v1/chat/completions`, `/v1/completions`, `/v1/embeddings`, `/v1/models`), with the same
 * deterministic answers the queue's `openai` handler gives, streamed as Server-Sent Events for
 * `"stream": true`; token delays are virtual time.
 */
export function openAiFetchHandler(endpointId: string, clock: VirtualClock, settingsOf: OpenAiSettingsOf, requestId: () => string): FetchHandler {
  return async (req) => {
    const url = new URL(req.url);
    if (url.pathname === LB_HEALTH_PATH_DEFAULT) return json(200, { status: "healthy" });
    let body: Record<string, unknown> = {};
    if (req.method !== "GET" && req.method !== "HEAD") {
      try {
        const parsed = (await req.json()) as unknown;
        if (!isRecord(parsed)) return json(400, { error: { message: "the request body must be a JSON object", type: "invalid_request_error", param: null, code: null } });
        body = parsed;
      } catch {
        return json(400, { error: { message: "the request body is not valid JSON", type: "invalid_request_error", param: null, code: null } });
      }
    }
    const ctx = context(endpointId, requestId(), clock, req.signal);
    const route = url.pathname;
    const value = await answerOpenAi({ openai_route: route, openai_input: body }, ctx, settingsOf, clock.wall, false);
    if (isAsyncIterable(value)) return new Response(events(value), { status: 200, headers: SSE_HEADERS });
    const error = handlerError(value);
    if (error) return json(error.status, error.body);
    if (body.stream === true) return new Response(streamOfWhole(value) + DONE_EVENT, { status: 200, headers: SSE_HEADERS });
    const answer = completedAnswer(value, route);
    return json(answer.status, answer.body);
  };
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof v === "object" && v !== null && Symbol.asyncIterator in v;
}

/**
 * Each chunk as it comes, then `data: [DONE]`. One chunk is made ahead of the reader, so the wait
 * for the next token is on the clock as soon as the last is out, not once the client has read it:
 * a clock skipping ahead (auto, runUntilIdle) then finds the token's timer rather than the
 * exchange's 5.5-minute limit.
 */
function events(chunks: AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const it = chunks[Symbol.asyncIterator]();
  return new ReadableStream(
    {
      async pull(controller) {
        const next = await it.next();
        if (next.done) {
          controller.enqueue(encoder.encode(DONE_EVENT));
          controller.close();
        } else {
          controller.enqueue(encoder.encode(sseText(next.value)));
        }
      },
      async cancel() {
        await it.return?.();
      },
    },
    { highWaterMark: 2 },
  );
}

/** What the OpenAI answers need of a handler's context: ids, the virtual clock, the request's end. */
function context(endpointId: string, jobId: string, clock: VirtualClock, signal: AbortSignal): HandlerContext {
  return {
    jobId,
    endpointId,
    attempt: 1,
    signal,
    now: () => clock.now(),
    sleep: (ms) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason as Error);
        const timer = clock.after(ms, () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        }, "load-balancer openai token");
        const onAbort = () => {
          clock.cancel(timer);
          reject(signal.reason as Error);
        };
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    s3Config: undefined,
    progress: () => {},
    log: () => {},
  };
}
