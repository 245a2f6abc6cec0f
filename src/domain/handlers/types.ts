import type { S3Config } from "../job.js";

/** What a handler receives besides the job input. */
export interface HandlerContext {
  jobId: string;
  endpointId: string;
  /** 1 on the first run, 2 after one retry, ... */
  attempt: number;
  /** Aborts when the job is cancelled, times out or expires. */
  signal: AbortSignal;
  /** Waits `ms` of virtual time (rejects when the signal aborts). */
  sleep(ms: number): Promise<void>;
  /** Virtual now, epoch ms. */
  now(): number;
  /** The caller's storage settings, secret included, for the handler only. */
  s3Config: S3Config | undefined;
  /** Publishes a progress output, visible on `/status` while the job runs. */
  progress(output: unknown): void;
  /**
   * Writes a line to the worker's log (`GET /v2/serverless/{id}/workers/{workerId}/logs`, source
   * `container`), at the virtual time; the arguments are joined as console.log joins them.
   */
  log(...args: unknown[]): void;
}

/**
 * A handler returns the job output (or a promise of it), or is an async generator whose every
 * yield is one stream chunk. Throwing fails the job with the message as `error`.
 *
 * `I` types the job input the handler expects: `Handler<{ prompt: string }>` may be given
 * wherever a `Handler` is, since minipod cannot check what clients send. (It is declared as a
 * method's type, whose parameters TypeScript compares both ways, for that reason.)
 */
export type Handler<I = Record<string, unknown>> = {
  handler(input: I, ctx: HandlerContext): unknown;
}["handler"];

const inputReaders = new WeakSet<Handler>();

/**
 * Marks one of minipod's own handlers that reads its input and nothing more: it neither changes
 * the input nor keeps it, and its output is that input itself or a value of its own. Such a
 * handler (`echo`) is given the job's stored input, not a copy of it, and an output that is that
 * very input is kept as it is: two JSON round trips a job fewer. Jobs are never changed in place,
 * so the stored input may be shared.
 */
export function readingInputOnly<H extends Handler>(fn: H): H {
  inputReaders.add(fn);
  return fn;
}

/** Whether `fn` was marked by `readingInputOnly`. */
export const readsInputOnly = (fn: Handler): boolean => inputReaders.has(fn);

/** The prefix of the names under which handlers given as functions in a config object are registered (see compose/inline-handlers.ts). */
export const INLINE_PREFIX = "inline:";
