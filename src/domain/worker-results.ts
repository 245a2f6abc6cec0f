import { EmulatorError } from "./errors.js";
import type { Job } from "./job.js";
import type { JobStore } from "./ports.js";
import { splitStreamOutput } from "./stream-chunks.js";
import type { Transitions } from "./transitions.js";

/**
 * What a worker posts for a job: `{ output }`, `{ error }` (with `output` when the handler
 * returned both), a progress update `{ status: "IN_PROGRESS", output }`, and `stopPod: true` when
 * the worker asks to be stopped after this job (`refresh_worker`).
 */
export interface WorkerResult {
  output?: unknown;
  error?: unknown;
  status?: unknown;
  stopPod?: unknown;
}

const hasError = (r: WorkerResult) => r.error !== undefined && r.error !== null && r.error !== "" && r.error !== false;
const errorText = (e: unknown) => (typeof e === "string" ? e : (JSON.stringify(e) ?? String(e)));

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
    const failed = { status: "FAILED" as const, output: result.output, error: errorText(result.error) };
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
