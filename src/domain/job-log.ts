import { isFinal, type Job } from "./job.js";
import type { Logger } from "./logger.js";
import type { JobChange, JobNotifier } from "./notifier.js";

/** The longest error a job-end line quotes; the job's status has the whole of it. */
const ERROR_QUOTED_CHARS = 300;

/** A duration for people: `850 ms`, `2.5 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const m = Math.round(s / 60);
  if (m < 1440) return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ""}`;
  const h = Math.round(m / 60);
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ""}`;
}

/** `: out of memory`, the error on one line and cut; empty when there is none. */
function quoted(error: string | undefined): string {
  if (!error) return "";
  const line = error.replace(/\s+/g, " ").trim();
  return `: ${line.length > ERROR_QUOTED_CHARS ? `${line.slice(0, ERROR_QUOTED_CHARS)}…` : line}`;
}

/** How long the job waited and ran, from its last entry in the queue: `(queued 2.0 s, ran 3.0 s on worker abc)`. */
function phases(job: Job, at: number): string {
  const parts: string[] = [];
  const started = job.startedAt !== undefined && job.startedAt >= job.queuedAt;
  parts.push(`queued ${duration((started ? job.startedAt! : at) - job.queuedAt)}`);
  if (started) parts.push(`ran ${duration(at - job.startedAt!)}${job.workerId ? ` on worker ${job.workerId}` : ""}`);
  if (job.attempt > 1) parts.push(`attempt ${job.attempt}`);
  return `(${parts.join(", ")})`;
}

/**
 * The line a job's end gets in the log, or undefined for any other change:
 * `job 01a2…-u1 on echo COMPLETED after 5.0 s (queued 2.0 s, ran 3.0 s on worker k2x…)`,
 * `… FAILED after 2.0 s (…): out of memory`, `… CANCELLED while queued after 1.0 s (queued 1.0 s)`,
 * `… EXPIRED after 1 d (queued 1 d): ttl expired while IN_QUEUE`.
 */
export function jobEndLine(c: JobChange): string | undefined {
  const job = c.job;
  if (job && isFinal(job.status) && c.from !== undefined && !isFinal(c.from)) {
    const how = job.status === "CANCELLED" ? ` ${c.cause.replace(/^cancelled /, "")}` : "";
    return `job ${job.id} on ${job.endpointId} ${job.status}${how} after ${duration(c.at - job.createdAt)} ${phases(job, c.at)}${quoted(job.error)}`;
  }
  // A job deleted before it ended: its ttl ran out.
  const gone = c.deleted;
  if (!job && gone && !isFinal(gone.status) && c.cause.startsWith("ttl expired")) {
    return `job ${gone.id} on ${gone.endpointId} EXPIRED after ${duration(c.at - gone.createdAt)} ${phases(gone, c.at)}: ${c.cause} while ${gone.status}`;
  }
  return undefined;
}

/** Writes a line at info when a job ends: completed, failed, timed out, cancelled or expired. */
export function logJobEnds(notifier: JobNotifier, log: Logger): () => void {
  if (!log.enabled("info")) return () => {};
  return notifier.onAny((c) => {
    const line = jobEndLine(c);
    if (line !== undefined) log.info(line);
  });
}
