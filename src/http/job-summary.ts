import { z } from "@hono/zod-openapi";
import { JOB_STATUSES } from "../domain/job.js";
import type { JobSummary } from "../domain/ports.js";

// A job in listings (the control API's, the queue's /requests, the dashboard and its live feed).

export const JobSummarySchema = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    kind: z.enum(["run", "runsync"]),
    status: z.enum(JOB_STATUSES),
    createdAt: z.int().openapi({ description: "Virtual epoch ms of the submission" }),
    queuedAt: z.int().openapi({ description: "When the job last entered the queue (submission or retry)" }),
    startedAt: z.int().optional(),
    completedAt: z.int().optional(),
    workerId: z.string().optional(),
    retries: z.int(),
    attempt: z.int(),
    delayTime: z.int().optional().openapi({ description: "ms before a worker started it (so far, while queued)" }),
    executionTime: z.int().optional(),
  })
  .openapi("JobSummary");

export type JobSummaryView = z.infer<typeof JobSummarySchema>;

/** A job as listings and the live feed show it: states and times, no payloads. */
export function jobSummary(j: JobSummary, now: number): JobSummaryView {
  const view: JobSummaryView = {
    id: j.id,
    endpointId: j.endpointId,
    kind: j.kind,
    status: j.status,
    createdAt: j.createdAt,
    queuedAt: j.queuedAt,
    retries: j.retries,
    attempt: j.attempt,
  };
  if (j.startedAt !== undefined) view.startedAt = j.startedAt;
  if (j.completedAt !== undefined) view.completedAt = j.completedAt;
  if (j.workerId !== undefined) view.workerId = j.workerId;
  // Same arithmetic as the /status envelope, so the dashboard and the API agree.
  if (j.startedAt !== undefined) view.delayTime = Math.max(0, j.startedAt - j.queuedAt);
  else if (j.status === "IN_QUEUE") view.delayTime = Math.max(0, now - j.queuedAt);
  if (j.startedAt !== undefined && j.completedAt !== undefined) view.executionTime = Math.max(0, j.completedAt - j.startedAt);
  return view;
}
