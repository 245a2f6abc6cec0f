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

/** The prefix of the names under which handlers given as functions in a config object are registered (see compose/inline-handlers.ts). */
export const INLINE_PREFIX = "inline:";
