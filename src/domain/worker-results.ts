import { EmulatorError } from "./errors.js";
import type { Job } from "./job.js";
import type { JobStore } from "./ports.js";
import { splitStreamOutput } from "./stream-chunks.js";
import type { Transitions } from "./transitions.js";

/**
 * What a worker posts for a job: `{ output }`, `{ error }` (a string; with `output` when the handler
 * returned both), a progress update `{ status: "IN_PROGRESS", output }`, and `stopPod: true` when
 * the worker asks to be stopped after this job (`refresh_worker`).
 */
export interface WorkerResult {
  output?: unknown;
  error?: unknown;
  status?: unknown;
  stopPod?: unknown;
}

const hasError = (r: WorkerResult) => typeof r.error === "string" && r.error !== "";

const RESULT_KEYS = new Set(["output", "error", "status", "stopPod"]);
const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`);

/**
 * Why a job-done body is not a result the service would take, or undefined when it is. The
 * service's library sends `{output}`, `{error}` (a string: its own reports are JSON text), both
 * (a handler's dict with an `error` key), `{status: "IN_PROGRESS", output}` for progress, and
 * `stopPod: true`; nothing else. An `error` that is not a string is the known trap: the service
 * does not mark such a job FAILED (it is reported to end COMPLETED without output), where minipod
 * used to turn it into JSON text and fail the job, hiding the mistake.
 */
export function resultProblem(r: WorkerResult & Record<string, unknown>): string | undefined {
  const unknown = Object.keys(r).filter((k) => !RESULT_KEYS.has(k));
  if (unknown.length > 0) {
    return `a worker's result has only "output", "error", "status" and "stopPod"; ${unknown.map((k) => JSON.stringify(k)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not among them`;
  }
  if (r.status !== undefined && r.status !== "IN_PROGRESS") {
    return `"status" in a worker's post is only "IN_PROGRESS" (a progress update), got ${JSON.stringify(r.status)}: a result is {"output": ...} or {"error": "..."}`;
  }
  if (r.error !== undefined && r.error !== null && typeof r.error !== "string") {
    return `"error" must be a string, got ${kindOf(r.error)}: the service does not fail a job on such an error (it is reported to end COMPLETED without output); return {"error": "<message>"} or raise`;
  }
  return undefined;
}

/**
 * The end of a job as its worker reports it on job-done. `streamed` (`isStream=true`) ends a job
 * whose chunks went to job-stream: its output is what the worker sends, the aggregate with
 * `return_aggregate_stream`, else the runtime's empty list: as on the service, the chunks of a
 * generator that does not aggregate are only on /stream, so a worker that forgot the flag is seen
 * to give no output here too. A progress update leaves the job running. Answers the job as it is now.
 */
export function applyResult(d: { jobs: JobStore; transitions: Transitions }, job: Job, workerId: string, result: WorkerResult, streamed: boolean, now: number): Job {
  if (result.status === "IN_PROGRESS") {
    d.transitions.progress(job.id, result.output);
    return d.jobs.get(job.id) ?? job;
  }
  if (hasError(result)) {
    const failed = { status: "FAILED" as const, output: result.output, error: result.error as string };
    return d.transitions.finish(job, failed, now, `worker ${workerId} reported an error`);
  }
  const cause = streamed ? `worker ${workerId} ended its stream` : `worker ${workerId} returned a result`;
  return d.transitions.finish(job, { status: "COMPLETED", output: result.output, error: undefined }, now, cause);
}

/** One chunk a worker streams for a job (job-stream): `{ output }`, split when over 1 MB. */
export function applyChunk(transitions: Transitions, job: Job, result: WorkerResult): void {
  if (result.output === undefined) {
    throw new EmulatorError("BAD_REQUEST", `a stream chunk is {"output": ...}; the body for job ${job.id} has no "output"`);
  }
  transitions.appendChunks(job.id, splitStreamOutput(result.output));
}
