import type { MiddlewareHandler } from "hono";
import { EmulatorError } from "../domain/errors.js";

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

const tooLarge = (limit: number) =>
  new EmulatorError("PAYLOAD_TOO_LARGE", `request body exceeds the limit of ${limit} bytes (${(limit / 1024 / 1024).toFixed(0)} MB) for this operation`);

/**
 * Reads the request body once, refusing it with 413 as soon as it passes `limit` bytes (the
 * declared Content-Length first, then the bytes actually read), so no unbounded body is buffered.
 * A body sent without a JSON content type (curl's default form type) is read as JSON.
 */
export function jsonBody(limit: number): MiddlewareHandler {
  return async (c, next) => {
    const declared = Number(c.req.header("content-length"));
    if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
    const raw = c.req.raw;
    let text = "";
    if (raw.body) {
      const reader = raw.body.getReader();
      const decoder = new TextDecoder();
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) {
          void reader.cancel().catch(() => {});
          throw tooLarge(limit);
        }
        text += decoder.decode(value, { stream: true });
      }
      text += decoder.decode();
    }
    const type = c.req.header("content-type") ?? "";
    if (!JSON_TYPE.test(type)) {
      const headers = new Headers(raw.headers);
      headers.set("content-type", "application/json");
      c.req.raw = new Request(raw.url, { method: raw.method, headers, body: text.trim() === "" ? "{}" : text, signal: raw.signal });
      c.req.bodyCache = {};
    }
    // Hono keeps body promises in `bodyCache` (typed as the Body methods); the validator reads it.
    (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text.trim() === "" ? "{}" : text);
    await next();
  };
}
