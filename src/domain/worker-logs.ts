import { workerLog, type JobLine, type LogBook, type LogSource } from "./logbook.js";
import type { WorkerEvent } from "./simulated-workers.js";

/**
 * Writes what happens to simulated workers into their logs: their lifecycle (system lines, from the
 * worker pool's events) and their jobs and handler output (container lines, from the scheduler).
 */
export class WorkerLogs {
  /** Workers in their cold start: their first move to idle is "ready". */
  private readonly starting = new Set<string>();
  /** Each live worker's log key, made once rather than a new string at every line. */
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly logs: LogBook,
    private readonly clock: { now(): number },
    private readonly coldStartMs: (endpointId: string) => number | undefined,
  ) {}

  /** The WorkerPool observer. */
  readonly onWorker = (e: WorkerEvent): void => {
    const key = this.keyOf(e.workerId);
    if (e.type === "started") {
      if (e.state === "initializing") {
        this.starting.add(e.workerId);
        this.logs.append(key, e.at, "system", `worker created for endpoint ${e.endpointId}: cold start of ${this.coldStartMs(e.endpointId) ?? 0} ms`);
      } else {
        this.logs.append(key, e.at, "system", `worker created for endpoint ${e.endpointId}: ready at once (warm)`);
      }
    } else if (e.type === "stopped") {
      this.starting.delete(e.workerId);
      this.keys.delete(e.workerId);
      this.logs.append(key, e.at, "system", "worker stopped");
      this.logs.end(key);
    } else if (this.starting.delete(e.workerId)) {
      this.logs.append(key, e.at, "system", "worker ready: taking jobs");
    }
  };

  /** A line about a job or from its handler (`ctx.log`), in the worker's log. */
  write(workerId: string, source: LogSource, line: string): void {
    this.logs.append(this.keyOf(workerId), this.clock.now(), source, line);
  }

  /** The job's start (`n`: its attempt) or completion (`n`: the ms it ran) in the worker's log, worded when read. */
  job(workerId: string, kind: JobLine, jobId: string, n: number): void {
    this.logs.appendJob(this.keyOf(workerId), this.clock.now(), kind, jobId, n);
  }

  private keyOf(workerId: string): string {
    let key = this.keys.get(workerId);
    if (key === undefined) this.keys.set(workerId, (key = workerLog(workerId)));
    return key;
  }

  /** Forgets which workers are starting (reset, restore): their logs end with them. */
  clear(): void {
    this.starting.clear();
    this.keys.clear();
  }
}

/** What a handler passes to `ctx.log`, as one line: strings as they are, anything else as JSON. */
export function logLine(args: readonly unknown[]): string {
  return args
    .map((a) => {
      if (typeof a === "string") return a;
      if (a instanceof Error) return a.stack ?? a.message;
      try {
        return JSON.stringify(a) ?? String(a);
      } catch {
        return String(a);
      }
    })
    .join(" ");
}
