import { createRoute, z } from "@hono/zod-openapi";
import { OPENAI_PAYLOAD_MAX_BYTES } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";

const TAG = "OpenAI-compatible";

const EndpointParams = z.object({
  endpoint_id: z.string().min(1).openapi({ param: { name: "endpoint_id", in: "path" }, example: "llm" }),
});

export const OpenAiErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string().openapi({ example: "invalid_request_error" }),
      param: z.string().nullable(),
      code: z.union([z.string(), z.number()]).nullable(),
    }),
  })
  .openapi("OpenAIError", { description: "OpenAI's error object: every error of these routes, minipod's own (401, 404, 429...) and the handler's" });

const error = (description: string) => ({ description, content: { "application/json": { schema: OpenAiErrorSchema } } });
const ERRORS = {
  400: error("The request is malformed, or the handler refused it"),
  401: error("API key missing, malformed or unknown"),
  404: error("Unknown endpoint, or the handler does not serve the model or route"),
  429: error("Rate or concurrency limit of /openai/* exceeded; see Retry-After"),
  500: error("The job failed (the handler raised)"),
  504: error("The job exceeded its execution timeout"),
} as const;

const AnyBody = z.record(z.string(), z.unknown()).openapi("OpenAIRequest", { description: "The OpenAI request body, given to the handler as `openai_input`" });
const AnyAnswer = z.record(z.string(), z.unknown()).openapi("OpenAIResponse", { description: "The handler's answer" });
const eventStream = { "text/event-stream": { schema: z.string().openapi({ description: "`data: {chunk}` events as the handler streams them, then `data: [DONE]`" }) } };

const HOW = [
  'The request becomes a job of the endpoint (a sync job: `sync-` id, kept a minute after it ends) whose input is `{"openai_route": "/v1/...", "openai_input": <body>}`, as the service gives its vLLM worker; the endpoint\'s handler (simulated, or a worker process) runs it, and its output is the answer.',
  'With `"stream": true` the answer is `text/event-stream`: each output the handler streams is sent as it comes (`data: <JSON>` for an object, SSE text as it is), then `data: [DONE]`. Nothing is sent until the first output or the end of the job, so an error the handler reports at once keeps its status. A client that goes away cancels the job.',
  'An output `{"error": {"message", "type", "code"}}` is answered with the status in `code` (default 400); a FAILED job with 500, a TIMED_OUT one with 504.',
].join("\n\n");

/** Every method and path under `/openai` is a job: the routes that serve them. */
export const openAiPostRoute = createRoute({
  method: "post",
  path: "/v2/{endpoint_id}/openai/*",
  operationId: "openaiPost",
  tags: [TAG],
  summary: "Any OpenAI POST route, answered by the endpoint's handler",
  description: HOW,
  middleware: [jsonBody(OPENAI_PAYLOAD_MAX_BYTES)] as const,
  request: { params: EndpointParams, body: { required: true, content: { "application/json": { schema: AnyBody } } } },
  responses: { 200: { description: "The handler's answer", content: { "application/json": { schema: AnyAnswer }, ...eventStream } }, ...ERRORS },
});

export const openAiGetRoute = createRoute({
  method: "get",
  path: "/v2/{endpoint_id}/openai/*",
  operationId: "openaiGet",
  tags: [TAG],
  summary: "Any OpenAI GET route (such as /v1/models), answered by the endpoint's handler",
  description: `${HOW}\n\nA GET request gives the handler \`"openai_input": {}\`.`,
  request: { params: EndpointParams },
  responses: { 200: { description: "The handler's answer", content: { "application/json": { schema: AnyAnswer } } }, ...ERRORS },
});

const documented = (operationId: string, method: "get" | "post", route: string, summary: string, body?: z.ZodType) =>
  createRoute({
    method,
    path: `/v2/{endpoint_id}/openai${route}`,
    operationId,
    tags: [TAG],
    summary,
    description: `Served by \`${method.toUpperCase()} /v2/{endpoint_id}/openai/*\`, like any route under \`/openai\`. The built-in \`openai\` handler (and \`echo\`, \`scripted\`) answer it.`,
    request: body
      ? { params: EndpointParams, body: { required: true, content: { "application/json": { schema: body } } } }
      : { params: route.includes("{model}") ? EndpointParams.extend({ model: z.string().openapi({ param: { name: "model", in: "path" } }) }) : EndpointParams },
    responses: { 200: { description: "The answer", content: { "application/json": { schema: AnyAnswer }, ...(body ? eventStream : {}) } }, ...ERRORS },
  });

const message = z.looseObject({ role: z.string(), content: z.unknown() });
const streamFields = {
  stream: z.boolean().optional().openapi({ description: "Answer as Server-Sent Events" }),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional(),
};

/** The usual OpenAI routes, documented one by one (all are served by the routes above). */
export const OPENAI_DOCUMENTED = [
  documented(
    "openaiChatCompletions",
    "post",
    "/v1/chat/completions",
    "Chat completion",
    z
      .looseObject({
        model: z.string().optional(),
        messages: z.array(message),
        max_tokens: z.int().optional(),
        max_completion_tokens: z.int().optional(),
        n: z.int().optional(),
        stop: z.union([z.string(), z.array(z.string())]).optional(),
        tools: z.array(z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string(), parameters: z.unknown().optional() }) })).optional(),
        tool_choice: z.unknown().optional(),
        response_format: z.unknown().optional(),
        ...streamFields,
      })
      .openapi("ChatCompletionRequest"),
  ),
  documented(
    "openaiCompletions",
    "post",
    "/v1/completions",
    "Text completion",
    z.looseObject({ model: z.string().optional(), prompt: z.unknown(), max_tokens: z.int().optional(), echo: z.boolean().optional(), ...streamFields }).openapi("CompletionRequest"),
  ),
  documented(
    "openaiEmbeddings",
    "post",
    "/v1/embeddings",
    "Embeddings",
    z
      .looseObject({ model: z.string().optional(), input: z.unknown(), dimensions: z.int().optional(), encoding_format: z.enum(["float", "base64"]).optional() })
      .openapi("EmbeddingRequest"),
  ),
  documented("openaiModels", "get", "/v1/models", "Models the endpoint serves"),
  documented("openaiModel", "get", "/v1/models/{model}", "One model"),
];
