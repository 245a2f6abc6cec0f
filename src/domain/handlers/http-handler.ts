import type { Handler } from "./types.js";

/** A handler given as the URL of a worker's local test server (`http://127.0.0.1:8000`). */
export const isHttpRef = (ref: string): boolean => /^https?:\/\//i.test(ref);

/**
 * Forwards each job to a worker's local test server: `POST {url}/runsync` with `{ id, input }`,
 * reading `{ status, output }` or `{ error }` back. It runs under minipod's queue, so timeouts,
 * cancel (the request is aborted), faults and webhooks apply as to any handler.
 */
export function httpHandler(url: string): Handler {
  const base = url.replace(/\/+$/, "");
  return async (input, ctx) => {
    let res: Response;
    try {
      res = await fetch(`${base}/runsync`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: ctx.jobId, input }),
        signal: ctx.signal,
      });
    } catch (e) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const err = e as Error & { cause?: { code?: string } };
      throw new Error(`worker at ${base} could not be reached: ${err.cause?.code ?? err.message}`);
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`worker at ${base}/runsync answered ${res.status}: ${text.slice(0, 300)}`);
    let body: { status?: unknown; output?: unknown; error?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new Error(`worker at ${base}/runsync answered something that is not JSON: ${text.slice(0, 100)}`);
    }
    if (body.error !== undefined && body.error !== null && body.error !== "") {
      throw new Error(typeof body.error === "string" ? body.error : JSON.stringify(body.error));
    }
    if (typeof body.status === "string" && body.status !== "COMPLETED") throw new Error(`worker at ${base} reported status ${body.status}`);
    return body.output;
  };
}
