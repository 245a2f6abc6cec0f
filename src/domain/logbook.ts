import { RecentMap } from "./recent-map.js";

/** Where a log line comes from: what runs in the container, or the host's lifecycle events. */
export type LogSource = "container" | "system";

/** One line of a pod's or worker's log, at a virtual time. */
export interface LogLine {
  at: number;
  source: LogSource;
  line: string;
}

/** Lines kept per pod or worker: the most a client may ask to backfill (`tail` ≤ 5000). */
export const LOG_LINES_KEPT = 5000;
/** Pods and workers whose logs are kept; the oldest leave first (workers come and go with scaling). */
const LOGS_KEPT = 500;
/** Lines a log may grow past `LOG_LINES_KEPT` before its oldest are dropped, in one cut. */
const TRIM_SLACK = 1000;

type Listener = (line: LogLine | undefined) => void;

/**
 * What minipod knows of its pods and workers, as log lines on the virtual clock: lifecycle
 * events, jobs, and what handlers write with `ctx.log`. Held in memory, bounded; a subscriber
 * hears every new line of a log, and `undefined` when the log has ended (its pod or worker is
 * gone, or the emulator resets).
 */
export class LogBook {
  private readonly logs = new RecentMap<string, LogLine[]>(LOGS_KEPT);
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly ended = new Set<string>();

  append(key: string, at: number, source: LogSource, line: string): void {
    let lines = this.logs.get(key);
    if (!lines) this.logs.set(key, (lines = []));
    const entry = { at, source, line };
    lines.push(entry);
    // Cut in bulk, not a line per append: a busy worker writes two lines per job.
    if (lines.length >= LOG_LINES_KEPT + TRIM_SLACK) lines.splice(0, lines.length - LOG_LINES_KEPT);
    const set = this.listeners.get(key);
    if (set) for (const fn of [...set]) fn(entry);
  }

  /** The newest `LOG_LINES_KEPT` lines, oldest first. */
  lines(key: string): readonly LogLine[] {
    const lines = this.logs.get(key) ?? [];
    return lines.length > LOG_LINES_KEPT ? lines.slice(-LOG_LINES_KEPT) : lines;
  }

  /** Whether the log's pod or worker is gone: no line will come. */
  hasEnded(key: string): boolean {
    return this.ended.has(key);
  }

  /** Calls `fn` with each new line of a log, then `undefined` when it ends, until the returned function is called. */
  subscribe(key: string, fn: Listener): () => void {
    let set = this.listeners.get(key);
    if (!set) this.listeners.set(key, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  /** The log's pod or worker is gone: its lines stay readable, its subscribers hear the end. */
  end(key: string): void {
    this.ended.add(key);
    if (this.ended.size > LOGS_KEPT) this.ended.delete(this.ended.values().next().value!);
    const set = this.listeners.get(key);
    if (set) for (const fn of [...set]) fn(undefined);
  }

  /** Forgets every log (reset); subscribers hear the end. */
  clear(): void {
    for (const set of [...this.listeners.values()]) for (const fn of [...set]) fn(undefined);
    this.listeners.clear();
    this.logs.clear();
    this.ended.clear();
  }
}

/** The log of a pod and of a worker, by id. */
export const podLog = (podId: string): string => `pod:${podId}`;
export const workerLog = (workerId: string): string => `worker:${workerId}`;
