import { stepUntil } from "../domain/activity.js";
import { RawJson, valueOf } from "../domain/json-text.js";
import { VIRTUAL_TIME_MAX_MS } from "../domain/bounds.js";
import type { VirtualClock } from "../domain/clock.js";
import { EmulatorError } from "../domain/errors.js";
import { isFinal, toView, type Job, type JobStatus, type JobView } from "../domain/job.js";
import type { JobService } from "../domain/jobs.js";
import type { JobNotifier } from "../domain/notifier.js";

/** The view with a large output (kept as its text, RawJson) as its value. */
const withValue = (view: JobView): JobView => (view.output instanceof RawJson ? { ...view, output: valueOf(view.output) } : view);

/**
 * Resolves with the job's view once it reaches `status`, within `withinMs` virtual ms. On the
 * manual clock it moves time itself, timer by timer, by the rule of `Activity`: never while real
 * work runs (a handler computing, a job on a worker process), whose end it waits for instead, at
 * most `withinMs` of wall time in all. On the auto clock it is a waiter, for which time skips
 * ahead by the same rule; on the real clock it waits. Rejects when the job ends in another final
 * state, disappears, or time runs out.
 */
export async function waitForJob(
  d: { clock: VirtualClock; jobs: JobService; notifier: JobNotifier },
  endpointId: string,
  jobId: string,
  status: JobStatus,
  withinMs: number,
): Promise<JobView> {
  const { clock, jobs } = d;
  const limit = Math.min(clock.now() + withinMs, VIRTUAL_TIME_MAX_MS);
  let seen = false;
  const check = (job: Job | undefined): JobView | undefined => {
    if (!job) {
      throw new EmulatorError(
        "JOB_NOT_FOUND",
        seen
          ? `job ${jobId} is gone (ttl, retention or purge) before reaching ${status}`
          : `no job ${jobId} on endpoint ${endpointId}: it was never submitted there (check the endpoint and the id /run answered), or it was removed already (ttl, retention or purge)`,
      );
    }
    seen = true;
    // A large output is kept as its text (RawJson): a test is handed its value.
    if (job.status === status) return withValue(toView(job, clock.now()));
    if (isFinal(job.status) && !(status === "IN_QUEUE" && (job.status === "FAILED" || job.status === "TIMED_OUT"))) {
      throw new EmulatorError("INVALID_STATE", `job ${jobId} ended ${job.status}${job.error ? ` (${job.error})` : ""}, not ${status}`);
    }
    return undefined;
  };
  const current = () => {
    try {
      return jobs.get(endpointId, jobId);
    } catch {
      return undefined;
    }
  };
  if (clock.mode === "manual") {
    let view: JobView | undefined;
    const end = await stepUntil(clock, () => (view = check(current())) !== undefined, limit, withinMs);
    if (view) return view;
    const job = current();
    const held = end === "late" ? `; real work held it ${withinMs} ms of wall time` : "";
    throw new EmulatorError("INVALID_STATE", `job ${jobId} did not reach ${status} within ${withinMs} virtual ms (it is ${job?.status}${job?.workerId && job.status === "IN_PROGRESS" ? ` on worker ${job.workerId}` : ""}${held})`);
  }
  const first = check(current());
  if (first) return first;
  return new Promise<JobView>((resolve, reject) => {
    // Released in the same turn as the change it waited for, so the auto clock skips no further.
    const waiting = clock.activity.waiting();
    const done = (fn: () => void) => {
      waiting();
      unwatch();
      clock.cancel(timer);
      fn();
    };
    const unwatch = d.notifier.watch(jobId, (c) => {
      try {
        const view = check(c.job);
        if (view) done(() => resolve(view));
      } catch (e) {
        done(() => reject(e as Error));
      }
    });
    const timer = clock.at(limit, () => done(() => reject(new EmulatorError("INVALID_STATE", `job ${jobId} did not reach ${status} within ${withinMs} virtual ms`))), "wait-for-job");
  });
}
