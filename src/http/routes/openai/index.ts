import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Job } from "../../../domain/job.js";
import type { OpenAiJsonAnswer } from "../../../domain/openai/protocol.js";
import type { Core } from "../../core.js";
import type { AppEnv } from "../../env.js";
import { pendingWrites } from "../../pending-writes.js";
import { OPENAI_DOCUMENTED, openAiGetRoute, openAiPostRoute } from "./routes.js";

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  // No Connection header: node's own keeps the connection, or closes it after the stream when the request asked to.
  // Sent as it is written: node's chunked encoding, no proxy buffering.
  "transfer-encoding": "chunked",
  "x-accel-buffering": "no",
} as const;

/**
 * `/v2/{endpoint_id}/openai/*`: any OpenAI request, for any method the service takes, becomes a
 * job of the endpoint, and its output the answer (see `OpenAiRequests`).
 */
export function openAiRoutes(core: Pick<Core, "openai" | "clock">, app: OpenAPIHono<AppEnv>): void {
  const { openai, clock } = core;

  const serve = async (c: Context<AppEnv>, endpointId: string, body: Record<string, unknown>): Promise<Response> => {
    const route = c.req.path.slice(`/v2/${endpointId}/openai`.length) || "/";
    const job = openai.submit(endpointId, c.req.method, route, body);
    const signal = c.req.raw.signal;
    if (body.stream !== true) return json(c, await openai.answer(job, route, signal));
    // The stream outlives this handler: its concurrency slot is held until the stream ends.
    const release = c.get("keepSlot")?.() ?? (() => {});
    const answer = await openai.stream(job, route, signal);
    if (answer.kind === "json") {
      release();
      return json(c, answer.answer);
    }
    // Written to a slow reader, a piece still going out is real work (see pendingWrites).
    return new Response(pendingWrites(eventBody(answer.events, job, release, (j) => openai.abandon(j)), clock), { status: 200, headers: SSE_HEADERS });
  };

  app.openapi(openAiPostRoute, (c) => serve(c, c.req.valid("param").endpoint_id, c.req.valid("json")) as never);
  app.openapi(openAiGetRoute, (c) => serve(c, c.req.valid("param").endpoint_id, {}) as never);
  for (const route of OPENAI_DOCUMENTED) app.openAPIRegistry.registerPath(route);
}

function json(c: Context<AppEnv>, answer: OpenAiJsonAnswer): Response {
  if (answer.retryAfter !== undefined) c.header("retry-after", String(answer.retryAfter));
  return c.json(answer.body as object, answer.status as 200);
}

/**
 * The response body of an event stream: each piece of text as the job produces it. When the
 * client goes away first, the job is cancelled; either way the concurrency slot is released once.
 */
function eventBody(events: AsyncGenerator<string, void, undefined>, job: Job, release: () => void, abandon: (job: Job) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    release();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await events.next();
        if (next.done) {
          end();
          controller.close();
        } else {
          controller.enqueue(encoder.encode(next.value));
        }
      } catch (e) {
        end();
        controller.error(e);
      }
    },
    cancel() {
      end();
      // Cancelling the job wakes the generator; returning it then lets it unwatch the job.
      abandon(job);
      void events.return().catch(() => {});
    },
  });
}
