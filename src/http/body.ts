import type { Context, MiddlewareHandler } from "hono";
import type { IncomingMessage } from "node:http";
import { EmulatorError } from "../domain/errors.js";

const tooLarge = (limit: number) =>
  new EmulatorError("PAYLOAD_TOO_LARGE", `request body exceeds the limit of ${limit} bytes (${(limit / 1024 / 1024).toFixed(0)} MB) for this operation`);

/**
 * The bytes of request bodies held at once, all requests together (`memory.requestBodyBytes`):
 * a body takes its bytes as they arrive and gives them back once its request has been handled.
 * One past the budget is refused with 503 while it arrives, so a crowd of large uploads cannot
 * grow minipod's memory past it.
 */
export class BodyBudget {
  private held = 0;

  // The wait for a body still arriving is real work for the clock: the pipeline marks it (markBodyArriving).
  constructor(readonly max: number) {}

  /** Bytes held now. */
  get inUse(): number {
    return this.held;
  }

  /** Takes `bytes`, or throws the 503 that refuses the body. */
  take(bytes: number): void {
    if (this.held + bytes > this.max) {
      throw new EmulatorError(
        "BUSY",
        `request bodies being handled at once reached memory.requestBodyBytes (${this.max} bytes): send this one again once earlier uploads are answered (Retry-After), send fewer large bodies at once, or raise memory.requestBodyBytes`,
        { retryAfter: 1 },
      );
    }
    this.held += bytes;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

/**
 * What one request's body holds of a `BodyBudget`: the reader takes bytes as they arrive (and gives
 * them all back if it fails); whoever handles the request calls `release` once done with the body.
 */
export class BodyHold {
  private bytes = 0;

  constructor(private readonly budget: BodyBudget) {}

  take(bytes: number): void {
    this.budget.take(bytes);
    this.bytes += bytes;
  }

  release(): void {
    this.budget.give(this.bytes);
    this.bytes = 0;
  }
}

const BODY_LIMIT = Symbol("jsonBody limit");
const BODY_TEXT_FIELDS = Symbol("jsonBody fields kept as text");

/**
 * A route's JSON body, read once and refused with 413 as soon as it passes `limit` bytes (the
 * declared Content-Length first, then the bytes actually read), so no unbounded body is buffered.
 *
 * In a route's `middleware`, it declares the body: `CheckedOpenAPIHono` reads it with
 * `readJsonBody` in the route's own step and parses it as JSON whatever its Content-Type (curl's
 * default form type included). Run as a plain middleware, it reads it into Hono's body cache
 * (`c.req.text()`).
 *
 * `keepAsText` names top-level fields (a job's `input`) that a large body keeps as JSON text: such
 * a body is parsed off the event loop and those fields reach the route as `RawJson`, never parsed
 * on it (see `parseOffLoop`).
 */
export function jsonBody(limit: number, keepAsText: readonly string[] = []): MiddlewareHandler {
  const mw: MiddlewareHandler = async (c, next) => {
    await readJsonBody(c, limit);
    await next();
  };
  return Object.assign(mw, { [BODY_LIMIT]: limit, [BODY_TEXT_FIELDS]: keepAsText });
}

/** The limit a `jsonBody(limit)` middleware declares; undefined for any other middleware. */
export const bodyLimitOf = (mw: unknown): number | undefined => (mw as { [BODY_LIMIT]?: number } | undefined)?.[BODY_LIMIT];

/** The fields a `jsonBody` middleware keeps as text in a large body (none for any other middleware). */
export const bodyTextFieldsOf = (mw: unknown): readonly string[] => (mw as { [BODY_TEXT_FIELDS]?: readonly string[] } | undefined)?.[BODY_TEXT_FIELDS] ?? [];

/**
 * Reads the body of `c`'s request under `limit` bytes: its text, or "{}" when it is empty. Hono's
 * body cache keeps it, for the request journal.
 */
export async function readJsonBody(c: Context, limit: number, hold?: BodyHold): Promise<string> {
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  // On @hono/node-server, read the socket directly: touching `raw.body` would build a full
  // web Request and stream per request, a fifth of the CPU time of a /run (see bench/).
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const read = incoming && typeof incoming.on === "function" ? await readIncoming(incoming, limit, hold) : await readStream(c.req.raw.body, limit, hold);
  const text = jsonText(read);
  // Hono keeps body promises in `bodyCache` (typed as the Body methods).
  (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
  return text;
}

/** The text a JSON body is parsed from: an empty body (or only whitespace) is `{}`. */
export const jsonText = (read: string): string => (read.trim() === "" ? "{}" : read);

async function readStream(body: ReadableStream<Uint8Array> | null, limit: number, hold: BodyHold | undefined): Promise<string> {
  if (!body) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) throw tooLarge(limit);
      hold?.take(value.byteLength);
      text += decoder.decode(value, { stream: true });
    }
  } catch (e) {
    void reader.cancel().catch(() => {});
    hold?.release();
    throw e;
  }
  return text + decoder.decode();
}

/** What reading one body keeps, on node's request itself: its listeners are shared and get the request as `this`. */
interface Reading {
  limit: number;
  hold: BodyHold | undefined;
  /** The first chunk (a small body's only one), then every chunk. */
  first: Buffer | undefined;
  chunks: Buffer[] | undefined;
  size: number;
  resolve: (text: string) => void;
  reject: (e: unknown) => void;
}
const READING = Symbol("minipod body being read");
type Read = IncomingMessage & { [READING]?: Reading | undefined };

/**
 * The body of node's request as text, refused with 413 once it passes `limit` bytes. Its four
 * listeners are functions of this module, shared by every request (each /run made six closures).
 */
export function readIncoming(incoming: IncomingMessage, limit: number, hold?: BodyHold): Promise<string> {
  return new Promise((resolve, reject) => {
    if (incoming.readableEnded) return resolve("");
    (incoming as Read)[READING] = { limit, hold, first: undefined, chunks: undefined, size: 0, resolve, reject };
    incoming.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

/** Stops reading: the listeners gone; the reading, if it was still going. */
function stopReading(incoming: Read): Reading | undefined {
  const r = incoming[READING];
  if (r === undefined) return undefined;
  incoming[READING] = undefined;
  incoming.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
  return r;
}

function failReading(incoming: Read, e: unknown): void {
  const r = stopReading(incoming);
  if (r === undefined) return;
  r.hold?.release();
  r.reject(e);
}

function onData(this: Read, chunk: Buffer): void {
  const r = this[READING];
  if (r === undefined) return;
  r.size += chunk.length;
  if (r.size > r.limit) return failReading(this, tooLarge(r.limit));
  try {
    r.hold?.take(chunk.length);
  } catch (e) {
    return failReading(this, e);
  }
  if (r.first === undefined) r.first = chunk;
  else (r.chunks ??= [r.first]).push(chunk);
}

function onEnd(this: Read): void {
  const r = stopReading(this);
  // A small body arrives in one chunk: decoded as it is, without a copy into a new buffer first.
  if (r !== undefined) r.resolve(r.chunks !== undefined ? Buffer.concat(r.chunks, r.size).toString("utf8") : (r.first?.toString("utf8") ?? ""));
}

function onError(this: Read, e: Error): void {
  failReading(this, new EmulatorError("BAD_REQUEST", `the request body could not be read: ${e.message}`));
}

function onClose(this: Read): void {
  if (this.readableEnded) return onEnd.call(this);
  failReading(this, new EmulatorError("BAD_REQUEST", "the client closed the connection before sending the whole body"));
}
