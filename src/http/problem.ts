import type { ServerResponse } from "node:http";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { EmulatorError, type ErrorCode } from "../domain/errors.js";
import type { AppEnv } from "./env.js";
import { errorAnswer } from "../domain/openai/protocol.js";
import { formatIssues } from "./validation-messages.js";
import type { Logger } from "../domain/logger.js";

/** The ErrorResponse of the specification (`application/problem+json`). */
export interface Problem {
  title: string;
  status: number;
  detail: string;
  errors?: string[];
}

/** Every error code's HTTP status and title: the one mapping table. */
export const PROBLEMS: Readonly<Record<ErrorCode, { status: ContentfulStatusCode; title: string }>> = {
  BAD_REQUEST: { status: 400, title: "Bad Request" },
  VALIDATION_FAILED: { status: 400, title: "Bad Request" },
  INVALID_STATE: { status: 400, title: "Bad Request" },
  UNAUTHORIZED: { status: 401, title: "Unauthorized" },
  FORBIDDEN: { status: 403, title: "Forbidden" },
  ENDPOINT_NOT_FOUND: { status: 404, title: "Not Found" },
  JOB_NOT_FOUND: { status: 404, title: "Not Found" },
  NOT_FOUND: { status: 404, title: "Not Found" },
  ROUTE_NOT_FOUND: { status: 404, title: "Not Found" },
  METHOD_NOT_ALLOWED: { status: 405, title: "Method Not Allowed" },
  CONFLICT: { status: 409, title: "Conflict" },
  PAYLOAD_TOO_LARGE: { status: 413, title: "Payload Too Large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: "Unsupported Media Type" },
  RATE_LIMITED: { status: 429, title: "Too Many Requests" },
  INJECTED_FAULT: { status: 500, title: "Internal Server Error" },
  STORAGE_FULL: { status: 507, title: "Insufficient Storage" },
  BUSY: { status: 503, title: "Service Unavailable" },
  INTERNAL: { status: 500, title: "Internal Server Error" },
};

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

export const statusTitle = (status: number): string => TITLES[status] ?? (status >= 500 ? "Server Error" : "Error");

/** A request-validation failure from zod issues, each entry "location: message". */
export function validationError(error: z.ZodError, where: "body" | "query" | "path" | "header" = "body"): EmulatorError {
  const errors = formatIssues(error.issues, where);
  const detail = where === "body" ? "the request body is invalid" : `the request ${where === "path" ? "path" : `${where} parameters`} are invalid`;
  return new EmulatorError("VALIDATION_FAILED", `${detail}: ${errors.join("; ")}`, { errors });
}

/** Whether `err` is SQLite's "database or disk is full" (the disk, or the database's page limit). */
export const isStorageFull = (err: unknown): boolean => typeof err === "object" && err !== null && (err as { code?: unknown }).code === "SQLITE_FULL";

/**
 * The errors that come from what a client sent or from the machine, not from a fault of minipod:
 * a malformed percent-encoding (`decodeURIComponent` of a path, query or cookie) and a full disk.
 */
function known(err: unknown): EmulatorError | undefined {
  if (err instanceof URIError) {
    return new EmulatorError(
      "BAD_REQUEST",
      "the request has a malformed percent-encoding (a % not followed by two hex digits of valid UTF-8) in its path, query or a cookie: encode it with encodeURIComponent",
    );
  }
  if (isStorageFull(err)) {
    return new EmulatorError(
      "STORAGE_FULL",
      "the disk is full: minipod could not store this change (SQLite: database or disk is full), so nothing of this request was kept; free space on the disk that holds the --db file (or start minipod with --db elsewhere) and send it again. Without --db, the in-memory database reached memory.databaseBytes: send it again once results expire (30 min after completion), or raise memory.databaseBytes",
      { retryAfter: 5 },
    );
  }
  return undefined;
}

/** `err` as the EmulatorError it is or stands for (a full disk, a malformed encoding); undefined for a fault of minipod's own. */
export function asEmulatorError(err: unknown): EmulatorError | undefined {
  return err instanceof EmulatorError ? err : known(err);
}

/** Turns anything thrown into a problem; unknown errors become 500 without leaking internals. */
export function toProblem(thrown: unknown): { problem: Problem; retryAfter?: number | undefined } {
  const err = known(thrown) ?? thrown;
  if (err instanceof EmulatorError) {
    const row = PROBLEMS[err.code];
    const status = err.status ?? row.status;
    const problem: Problem = { title: err.status ? statusTitle(status) : row.title, status, detail: err.message };
    if (err.errors?.length) problem.errors = err.errors;
    return { problem, retryAfter: err.retryAfter };
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const detail =
      status === 400 && /malformed json/i.test(err.message)
        ? "the request body is not valid JSON"
        : status === 415
          ? "send the body as JSON with the header Content-Type: application/json"
          : err.message || statusTitle(status);
    return { problem: { title: statusTitle(status), status, detail } };
  }
  return { problem: { title: "Internal Server Error", status: 500, detail: "an unexpected error occurred in the emulator; see its log" } };
}

/** Whether `err` is none of the errors the emulator answers on purpose: a fault of its own, logged with its stack. */
export function unexpected(err: unknown): boolean {
  return known(err) === undefined && !(err instanceof EmulatorError) && !(typeof err === "object" && err !== null && "getResponse" in err && "status" in err);
}

/** Where the database is kept, which the log line of a full disk names: a `--db` file, or memory bounded by `memory.databaseBytes`. */
export type StorageSetup = { file: string } | { memoryBytes: number };

/** Every how long a full disk is logged again (every write fails alike until space returns). */
const STORAGE_FULL_LOG_MS = 10_000;

/**
 * Logs the errors answered to requests (and the failed writes of a turn): a fault of minipod's
 * own with its stack; a full disk as one line at most every 10 s, saying what is full in this
 * setup (the disk of the `--db` file, or the in-memory database's `memory.databaseBytes`).
 */
export class FailureLog {
  private storageFullAt = -Infinity;

  constructor(
    private readonly log: Logger,
    private readonly storage: StorageSetup,
  ) {}

  failed(method: string, path: string, err: unknown): void {
    if (isStorageFull(err)) {
      const now = performance.now();
      if (now - this.storageFullAt < STORAGE_FULL_LOG_MS) return;
      this.storageFullAt = now;
      this.log.error(this.storageFullLine(`${method} ${path}`));
      return;
    }
    if (unexpected(err)) this.log.error(`${method} ${path}: ${(err as Error)?.stack ?? String(err)}`);
  }

  private storageFullLine(first: string): string {
    if ("file" in this.storage) {
      return `the disk is full: writes fail and are answered 507 (first: ${first}); free space on the disk that holds ${this.storage.file}, minipod goes on once there is room`;
    }
    const mib = (this.storage.memoryBytes / 1024 / 1024).toFixed(0);
    return `the in-memory database is full (memory.databaseBytes, ${mib} MiB): writes fail and are answered 507 (first: ${first}); minipod goes on as results expire (30 min after completion) or are purged; raise memory.databaseBytes, or keep the state in a file with --db`;
  }
}

/** The problem+json answer to `err`: status, headers and body text. */
export function problemAnswer(err: unknown): { status: number; headers: Record<string, string>; body: string } {
  const { problem, retryAfter } = toProblem(err);
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (retryAfter !== undefined) headers["retry-after"] = String(Math.max(0, Math.ceil(retryAfter)));
  // A 413 ends the connection: the client may still be sending a body minipod will not read. The
  // connection lingers meanwhile (linger.ts), so that the client reads this answer, not a reset.
  if (problem.status === 413) headers.connection = "close";
  return { status: problem.status, headers, body: JSON.stringify(problem) };
}

/**
 * Answers a request refused on minipod's socket before any route (a Host not allowed, a write
 * from another origin) with its problem+json, closing the connection: nothing of it is read.
 */
export function writeProblem(res: ServerResponse, err: unknown): void {
  const { status, headers, body } = problemAnswer(err);
  res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body), connection: "close" });
  res.end(body);
}

/** OpenAI's `code` for the errors minipod itself answers on the OpenAI routes. */
const OPENAI_CODES: Partial<Record<ErrorCode, string>> = {
  UNAUTHORIZED: "invalid_api_key",
  FORBIDDEN: "insufficient_permissions",
  ENDPOINT_NOT_FOUND: "endpoint_not_found",
  JOB_NOT_FOUND: "job_not_found",
  METHOD_NOT_ALLOWED: "method_not_allowed",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  RATE_LIMITED: "rate_limit_exceeded",
};

/**
 * The answer to `err` on an OpenAI route (`/v2/{endpoint_id}/openai/*`): the same status and
 * headers as problem+json, with OpenAI's error object as the body, which the OpenAI SDKs read
 * (`{"error": {"message", "type", "param", "code"}}`).
 */
export function openAiErrorAnswer(err: unknown): { status: number; headers: Record<string, string>; body: string } {
  const { problem, retryAfter } = toProblem(err);
  const code = err instanceof EmulatorError ? (OPENAI_CODES[err.code] ?? null) : null;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (retryAfter !== undefined) headers["retry-after"] = String(Math.max(0, Math.ceil(retryAfter)));
  return { status: problem.status, headers, body: JSON.stringify(errorAnswer(problem.status, problem.detail, code).body) };
}

/** Writes the error response: problem+json, or OpenAI's error object on the OpenAI routes. */
export function problemResponse(c: Context, err: unknown): Response {
  const { status, headers, body } = (c as Context<AppEnv>).get("openAi") ? openAiErrorAnswer(err) : problemAnswer(err);
  (c as Context<AppEnv>).set("problemBody", body);
  return c.body(body, status as ContentfulStatusCode, headers);
}
