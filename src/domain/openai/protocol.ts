/**
 * What a request to `/v2/{endpoint_id}/openai/*` is for the endpoint's handler, and the error
 * objects of those routes. The job input is what the real service gives its workers and what its
 * vLLM worker reads: `{"openai_route": "/v1/chat/completions", "openai_input": {...body}}`.
 */

export interface OpenAiJobInput {
  /** The path after `/openai`, e.g. `/v1/chat/completions`. */
  openai_route: string;
  /** The request's JSON body (`{}` for a request without one). */
  openai_input: Record<string, unknown>;
}

export const isOpenAiInput = (input: Record<string, unknown>): input is Record<string, unknown> & OpenAiJobInput =>
  typeof input.openai_route === "string" && isRecord(input.openai_input);

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** An error as vLLM's OpenAI server words it (`ErrorResponse`): the handler's output, with the HTTP status as `code`. */
export const errorOutput = (status: 400 | 404, message: string, param: string | null = null) => ({
  error: { message, type: status === 404 ? "NotFoundError" : "BadRequestError", param, code: status },
});
export type ErrorOutput = ReturnType<typeof errorOutput>;

/** OpenAI's error object: what the `openai` SDK and the AI SDK read to show a message. */
export interface OpenAiError {
  message: string;
  type: string;
  param: string | null;
  code: string | number | null;
}

/** An answer to an OpenAI route that is a JSON body with a status. */
export interface OpenAiJsonAnswer {
  status: number;
  body: unknown;
  retryAfter?: number | undefined;
}

/** OpenAI's `type` for an HTTP status, where nothing more precise is known. */
export function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  return status >= 500 ? "server_error" : "invalid_request_error";
}

export function errorAnswer(status: number, message: string, code: string | number | null = null, type = errorType(status), param: string | null = null): OpenAiJsonAnswer {
  const error: OpenAiError = { message, type, param, code };
  return { status, body: { error } };
}

const httpStatus = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && v >= 400 && v <= 599 ? v : undefined);

/**
 * The error a handler's output stands for, if it is one: OpenAI's `{"error": {message, type, code}}`
 * (vLLM's ErrorResponse since 0.10), vLLM's older flat `{"object": "error", message, type, code}`,
 * or `{"error": "text"}` (what the vLLM worker yields when its engine did not start). The status
 * is the error's numeric `code` when it is an HTTP status (vLLM puts it there), else 400, or 500
 * for a bare text.
 */
export function handlerError(value: unknown): OpenAiJsonAnswer | undefined {
  if (!isRecord(value)) return undefined;
  const e = value.error;
  const flat = value.object === "error" ? value : undefined;
  const obj = isRecord(e) && typeof e.message === "string" ? e : flat && typeof flat.message === "string" ? flat : undefined;
  if (obj) {
    const status = httpStatus(obj.code) ?? httpStatus(obj.status) ?? 400;
    const code = typeof obj.code === "string" || typeof obj.code === "number" ? obj.code : null;
    return errorAnswer(status, obj.message as string, code, typeof obj.type === "string" ? obj.type : errorType(status), typeof obj.param === "string" ? obj.param : null);
  }
  if (typeof e === "string" && e !== "") return errorAnswer(500, e);
  return undefined;
}

/**
 * The answer to a job that FAILED, from its `error` text. The service's Python library fails a
 * job whose generator yields an error object with that object's Python text
 * (`{'message': '...', 'type': 'NotFoundError', 'param': None, 'code': 404}`), and a handler that
 * raised with a JSON report (`error_message`); both are read back, anything else is a 500.
 */
export function failureAnswer(error: string): OpenAiJsonAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(error);
  } catch {
    parsed = undefined;
  }
  if (isRecord(parsed)) {
    const answer = handlerError(parsed) ?? handlerError({ error: parsed });
    if (answer) return answer;
    if (typeof parsed.error_message === "string") return errorAnswer(500, parsed.error_message);
  }
  const message = /'message':\s*(['"])(.*?)\1\s*[,}]/s.exec(error)?.[2];
  if (message !== undefined) {
    const status = httpStatus(Number(/'code':\s*(\d{3})\b/.exec(error)?.[1])) ?? 500;
    const type = /'type':\s*'([^']*)'/.exec(error)?.[1];
    return errorAnswer(status, message, status === 500 ? null : status, type ?? errorType(status));
  }
  return errorAnswer(500, error);
}
