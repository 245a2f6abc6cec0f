import type { JobInput, JobStatus } from "../../domain/job.js";
import type { Submission } from "../../domain/jobs.js";

/**
 * A batch's states, as the service names them. There is no RUNNING or COMPLETED: a FINALIZED
 * batch is done when `requestCompleted + requestFailed == requestTotal`.
 */
export const BATCH_STATUSES = ["DRAFT", "FINALIZED", "FAILED", "CANCELLED"] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** A batch request's status: PENDING while its batch is a draft, then its job's. */
export const REQUEST_STATUSES = ["PENDING", "IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

/** A batch as stored (a document of kind "batch", owned by its endpoint). Times are virtual epoch ms. */
export interface Batch {
  id: string;
  endpointId: string;
  name?: string | undefined;
  /** Where the batch's end is announced (POSTed once). */
  webhook?: string | undefined;
  status: BatchStatus;
  /** Requests added (DRAFT), fixed at finalize. */
  requestTotal: number;
  createdAt: number;
  updatedAt: number;
  finalizedAt?: number | undefined;
  /** When it ended: every request done, FAILED, or CANCELLED. */
  endedAt?: number | undefined;
  /** A cancel came while requests ran: CANCELLED once they have drained. */
  cancelRequested?: boolean | undefined;
  /** Why it FAILED. */
  error?: string | undefined;
}

/**
 * One request of a batch as stored (a document of kind "batch-request", owned by its batch): what
 * `/run` would be given. At finalize it becomes a job under the same id; the document stays, so
 * a finalize interrupted before its jobs were written is completed at the next start.
 */
export interface StoredRequest extends Submission {
  id: string;
  batchId: string;
  createdAt: number;
}

/** The counters of a batch (the service's field names). */
export interface BatchCounts {
  requestTotal: number;
  requestInProgress: number;
  requestCompleted: number;
  requestFailed: number;
}

/** A batch request as reported: its status and, once it ran, its result. */
export interface BatchRequestView {
  id: string;
  status: RequestStatus;
  /** A large one is kept as its text (RawJson), written as its value. */
  input?: JobInput;
  output?: unknown;
  error?: string;
  workerId?: string;
  retries?: number;
  startedAt?: number;
  completedAt?: number;
}

/** The counters from the batch's jobs counted by status (a FAILED request is one that failed or timed out). */
export function countsOf(total: number, byStatus: Record<JobStatus, number>): BatchCounts {
  return {
    requestTotal: total,
    requestInProgress: byStatus.IN_PROGRESS,
    requestCompleted: byStatus.COMPLETED,
    requestFailed: byStatus.FAILED + byStatus.TIMED_OUT,
  };
}

/** A batch that counts against the endpoint's active batches: a draft, or a finalized batch still running. */
export const isActive = (b: Batch): boolean => b.status === "DRAFT" || (b.status === "FINALIZED" && b.endedAt === undefined);
