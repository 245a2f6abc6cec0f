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
/**
 * Lines of all logs together: without it, 500 logs of 5,000 lines (a busy worker writes two lines
 * a job) held hundreds of MB. Past it, the logs of pods and workers that are gone leave first,
 * oldest first, then every log is cut to its share.
 */
export const LOG_LINES_TOTAL = 100_000;
/** Lines a log (or all of them) may grow past its bound before the oldest are dropped, in one cut. */
const TRIM_SLACK = 1000;

type Listener = (line: LogLine | undefined) => void;

/** A line about a job that minipod writes itself, by kind: kept as its parts and worded when read. */
export type JobLine = "started" | "completed";
const JOB_LINE_KINDS: readonly JobLine[] = ["started", "completed"];
const JOB_LINE_TEXT: Record<JobLine, (jobId: string, n: number) => string> = {
  started: (jobId, n) => `job ${jobId} started (attempt ${n})`,
  completed: (jobId, n) => `job ${jobId} completed in ${n} ms`,
};

/**
 * One log's lines, column by column rather than an object per line: a busy worker writes two
 * lines a job and the book keeps a hundred thousand, so each line as an object (its time a boxed
 * number, its text built from parts) outlived the young generation, and the collector's copying
 * of them cost about a tenth of a `POST /run` (measured on the echo workers). A job line keeps
 * the job id and its number and is worded when read (reads are rare: a log's backfill).
 */
class LogColumns {
  private at: number[] = [];
  private source: LogSource[] = [];
  /** The line, or for a job line the job id. */
  private text: string[] = [];
  /** 0 for a line as it is; else 1 + the index of its kind in `JOB_LINE_KINDS`. */
  private kind: number[] = [];
  /** A job line's number (the attempt, the ms). */
  private n: number[] = [];

  get length(): number {
    return this.at.length;
  }

  push(at: number, source: LogSource, text: string, kind: number, n: number): void {
    this.at.push(at);
    this.source.push(source);
    this.text.push(text);
    this.kind.push(kind);
    this.n.push(n);
  }

  line(i: number): LogLine {
    const kind = this.kind[i]!;
    const text = this.text[i]!;
    return { at: this.at[i]!, source: this.source[i]!, line: kind === 0 ? text : JOB_LINE_TEXT[JOB_LINE_KINDS[kind - 1]!](text, this.n[i]!) };
  }

  /** Drops the oldest lines but the newest `keep`. */
  cut(keep: number): void {
    const drop = this.length - keep;
    if (drop <= 0) return;
    for (const column of [this.at, this.source, this.text, this.kind, this.n]) column.splice(0, drop);
  }
}

/**
 * What minipod knows of its pods and workers, as log lines on the virtual clock: lifecycle
 * events, jobs, and what handlers write with `ctx.log`. Held in memory, bounded; a subscriber
 * hears every new line of a log, and `undefined` when the log has ended (its pod or worker is
 * gone, or the emulator resets).
 */
export class LogBook {
  /** Lines by log, in the order the logs began. */
  private readonly logs = new Map<string, LogColumns>();
  private total = 0;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly ended = new Set<string>();

  append(key: string, at: number, source: LogSource, line: string): void {
    this.add(key, at, source, line, 0, 0);
  }

  /** A line about a job (`job {jobId} started (attempt {n})`, `job {jobId} completed in {n} ms`), in the container's voice. */
  appendJob(key: string, at: number, kind: JobLine, jobId: string, n: number): void {
    this.add(key, at, "container", jobId, JOB_LINE_KINDS.indexOf(kind) + 1, n);
  }

  private add(key: string, at: number, source: LogSource, text: string, kind: number, n: number): void {
    let lines = this.logs.get(key);
    if (!lines) {
      this.logs.set(key, (lines = new LogColumns()));
      if (this.logs.size > LOGS_KEPT) this.drop(this.logs.keys().next().value!);
    }
    lines.push(at, source, text, kind, n);
    this.total++;
    // Cut in bulk, not a line per append: a busy worker writes two lines per job.
    if (lines.length >= LOG_LINES_KEPT + TRIM_SLACK) this.cut(lines, LOG_LINES_KEPT);
    if (this.total >= LOG_LINES_TOTAL + TRIM_SLACK) this.trimAll();
    const set = this.listeners.get(key);
    if (set) {
      const entry = lines.line(lines.length - 1);
      for (const fn of [...set]) fn(entry);
    }
  }

  /** Lines kept in all logs. */
  get size(): number {
    return this.total;
  }

  private drop(key: string): void {
    this.total -= this.logs.get(key)?.length ?? 0;
    this.logs.delete(key);
  }

  private cut(lines: LogColumns, keep: number): void {
    if (lines.length <= keep) return;
    this.total -= lines.length - keep;
    lines.cut(keep);
  }

  /** Back within {@link LOG_LINES_TOTAL}: the logs that ended first, oldest first, then every log to its share. */
  private trimAll(): void {
    for (const key of [...this.logs.keys()]) {
      if (this.total <= LOG_LINES_TOTAL) return;
      if (this.ended.has(key)) this.drop(key);
    }
    const share = Math.floor(LOG_LINES_TOTAL / Math.max(1, this.logs.size));
    for (const lines of this.logs.values()) this.cut(lines, share);
  }

  /** How many lines a log keeps (without wording them). */
  count(key: string): number {
    return Math.min(LOG_LINES_KEPT, this.logs.get(key)?.length ?? 0);
  }

  /** The newest `LOG_LINES_KEPT` lines, oldest first. */
  lines(key: string): readonly LogLine[] {
    const lines = this.logs.get(key);
    if (!lines) return [];
    const out: LogLine[] = [];
    for (let i = Math.max(0, lines.length - LOG_LINES_KEPT); i < lines.length; i++) out.push(lines.line(i));
    return out;
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
    this.total = 0;
    this.ended.clear();
  }
}

/** The log of a pod and of a worker, by id. */
export const podLog = (podId: string): string => `pod:${podId}`;
export const workerLog = (workerId: string): string => `worker:${workerId}`;
