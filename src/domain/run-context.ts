import type { HandlerContext } from "./handlers/types.js";
import type { Job } from "./job.js";
import type { RunStop } from "./run-stop.js";
import { logLine } from "./worker-logs.js";

/** Where a worker's jobs and its handlers' lines go (its log). */
export type WorkerLogSink = { write(workerId: string, source: "container" | "system", line: string): void };

/**
 * What a handler receives besides its input. `signal` is a getter on the prototype, so the
 * AbortController is made only if the handler reads it (a getter in an object literal cost node 20
 * about 0.6 µs per job, measured); the functions are the object's own, so a handler may take them
 * apart (`{ sleep, progress }`).
 */
export class RunContext implements HandlerContext {
  readonly jobId: string;
  readonly endpointId: string;
  readonly attempt: number;
  readonly s3Config: Job["s3Config"];
  readonly #stop: RunStop;
  readonly #logs: WorkerLogSink | undefined;
  readonly #workerId: string;

  constructor(
    job: Job,
    stop: RunStop,
    readonly now: () => number,
    readonly sleep: (ms: number) => Promise<void>,
    readonly progress: (output: unknown) => void,
    logs: WorkerLogSink | undefined,
    workerId: string,
  ) {
    this.jobId = job.id;
    this.endpointId = job.endpointId;
    this.attempt = job.attempt;
    this.s3Config = job.s3Config;
    this.#stop = stop;
    this.#logs = logs;
    this.#workerId = workerId;
  }

  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** A line in the worker's log (its container output), as console.log would print the arguments. */
  log(...args: unknown[]): void {
    this.#logs?.write(this.#workerId, "container", logLine(args));
  }
}
