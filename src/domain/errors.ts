/**
 * The one error type of the emulator. Domain code throws it with a literal code; `http/problem.ts`
 * maps each code to an HTTP status and a problem+json body.
 */
export type ErrorCode =
  | "BAD_REQUEST"
  | "VALIDATION_FAILED"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "ENDPOINT_NOT_FOUND"
  | "JOB_NOT_FOUND"
  | "NOT_FOUND"
  | "ROUTE_NOT_FOUND"
  | "METHOD_NOT_ALLOWED"
  | "INVALID_STATE"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "RATE_LIMITED"
  | "INJECTED_FAULT"
  | "STORAGE_FULL"
  | "BUSY"
  | "INTERNAL";

export class EmulatorError extends Error {
  readonly code: ErrorCode;
  /** Individual validation failures, each "location: message". */
  readonly errors: string[] | undefined;
  /** Seconds a client should wait (429, 503). */
  readonly retryAfter: number | undefined;
  /** An explicit status, for codes that carry one (injected faults). */
  readonly status: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    extra: { errors?: string[]; retryAfter?: number; status?: number; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "EmulatorError";
    this.code = code;
    this.errors = extra.errors;
    this.retryAfter = extra.retryAfter;
    this.status = extra.status;
  }
}

export const isEmulatorError = (e: unknown): e is EmulatorError => e instanceof EmulatorError;
