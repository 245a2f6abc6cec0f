import type { Job } from "../domain/job.js";
import { RawJson } from "../domain/json-text.js";
import { weighs } from "../domain/payload-size.js";

/**
 * A job whose input and output weigh more than this is not kept in memory between turns (neither
 * in `recent` nor in a queue's index): it is read from SQLite when needed. So the memory the job
 * store holds is bounded by the jobs it keeps at hand (2,000) times this, whatever the payloads (base64 images are common).
 */
export const JOB_KEPT_BYTES_MAX = 64 * 1024;

/** Whether a job is too large to keep at hand (see `JOB_KEPT_BYTES_MAX`). */
export const heavy = (job: Job) => payloadBytes(job) > JOB_KEPT_BYTES_MAX;

/** What a job's input and output weigh (a payload over `JOB_KEPT_BYTES_MAX` counted as that much). */
export const payloadBytes = (job: Job): number => weight(job.input) + (job.output === undefined ? 0 : weight(job.output));

/**
 * Weights of large inputs and outputs, by object: a job is saved at each move, and weighing a
 * large payload reads up to `JOB_KEPT_BYTES_MAX` of it, so it is weighed once. A small one is
 * weighed again each time, which costs less than keeping it here: an entry for every job's
 * payload would cost each `/run` a WeakMap entry and the collector its upkeep.
 */
const weights = new WeakMap<object, number>();
const WEIGHT_KEPT_FROM = 4 * 1024;
function weight(value: unknown): number {
  if (typeof value !== "object" || value === null) return weighs(value, JOB_KEPT_BYTES_MAX);
  if (value instanceof RawJson) return value.size;
  // A small payload is weighed whole in fewer steps than a WeakMap look-up takes.
  const small = weighs(value, WEIGHT_KEPT_FROM);
  if (small <= WEIGHT_KEPT_FROM) return small;
  const known = weights.get(value);
  if (known !== undefined) return known;
  const w = weighs(value, JOB_KEPT_BYTES_MAX);
  weights.set(value, w);
  return w;
}
