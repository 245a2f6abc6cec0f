/**
 * The job: its states, the transitions the specification allows, and the shapes a job is
 * reported in.
 */
import type { RawJson } from "./json-text.js";

export const JOB_STATUSES = ["IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const FINAL_STATUSES: ReadonlySet<JobStatus> = new Set(["COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"]);
export const isFinal = (s: JobStatus): boolean => FINAL_STATUSES.has(s);

/**
 * Every move a job may make. `IN_PROGRESS → IN_QUEUE` is the managed queue putting a job back
 * when its worker is lost. Deletion (ttl, retention, purge) is not a state.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  IN_QUEUE: ["IN_PROGRESS", "CANCELLED"],
  IN_PROGRESS: ["COMPLETED", "FAILED", "TIMED_OUT", "CANCELLED", "IN_QUEUE"],
  COMPLETED: [],
  FAILED: ["IN_QUEUE"],
  TIMED_OUT: ["IN_QUEUE"],
  CANCELLED: [],
};

export const canMove = (from: JobStatus, to: JobStatus): boolean => TRANSITIONS[from].includes(to);

/** `/run` keeps results 30 minutes, `/runsync` 1 minute. */
export type JobKind = "run" | "runsync";

export interface S3Config {
  accessId: string;
  accessSecret: string;
  bucketName: string;
  endpointUrl: string;
  objectPath?: string | undefined;
}

/** A job's input: a JSON object, or a large one's text. */
export type JobInput = Record<string, unknown> | RawJson;

export interface Job {
  id: string;
  endpointId: string;
  kind: JobKind;
  status: JobStatus;
  /** The caller's input; a large one stays the text it came as (see `RawJson`). */
  input: JobInput;
  /** Handler output; `undefined` when none. */
  output: unknown;
  error: string | undefined;
  webhook: string | undefined;
  s3Config: S3Config | undefined;
  executionTimeoutMs: number;
  ttlMs: number;
  lowPriority: boolean;
  createdAt: number;
  /** When the job last entered the queue (submission or retry). */
  queuedAt: number;
  startedAt: number | undefined;
  completedAt: number | undefined;
  workerId: string | undefined;
  /** How many times the job went back to the queue (retry or lost worker). */
  retries: number;
  /** How many times a worker started it. */
  attempt: number;
  /** FIFO position within its endpoint's queue. */
  queueSeq: number;
  /** createdAt + ttl: the hard limit. */
  expiresAt: number;
  /** startedAt + executionTimeout while IN_PROGRESS. */
  timeoutAt: number | undefined;
  /** completedAt + retention once final. */
  retainUntil: number | undefined;
  /** How many stream chunks `/stream` has handed out. */
  streamCursor: number;
  /**
   * The batch this job is a request of (`/v2/{endpoint}/batch`): it waits in the endpoint's batch
   * queue, runs on its batch workers, and worker processes receive the id with the job.
   */
  batchId?: string | undefined;
}

/** The two queues of an endpoint: `/run` traffic, and batch requests on workers of their own. */
export type Lane = "standard" | "batch";
export const laneOf = (job: Pick<Job, "batchId">): Lane => (job.batchId === undefined ? "standard" : "batch");

/** The earliest moment something must happen to this job (expiry, timeout, retention end). */
export function nextDeadline(job: Pick<Job, "expiresAt" | "timeoutAt" | "retainUntil">): number {
  return Math.min(job.expiresAt, job.timeoutAt ?? Infinity, job.retainUntil ?? Infinity);
}

/**
 * The fields of a job going back to the queue (retry, lost or crashed worker): results cleared,
 * one more retry counted, at queue position `queueSeq`.
 */
export function requeuedPatch(job: Job, now: number, queueSeq: number): Partial<Job> & Pick<Job, "status"> {
  return {
    status: "IN_QUEUE",
    output: undefined,
    error: undefined,
    queuedAt: now,
    startedAt: undefined,
    completedAt: undefined,
    workerId: undefined,
    retries: job.retries + 1,
    queueSeq,
    timeoutAt: undefined,
    retainUntil: undefined,
    streamCursor: 0,
  };
}

/** The envelope `/status`, `/runsync` and `/status-sync` share (see real-clients.md). */
export interface JobView {
  id: string;
  status: JobStatus;
  delayTime?: number;
  executionTime?: number;
  output?: unknown;
  error?: string;
  workerId?: string;
  retries?: number;
}

export function toView(job: Job, now: number): JobView {
  const view: JobView = { id: job.id, status: job.status };
  if (job.startedAt !== undefined) view.delayTime = Math.max(0, job.startedAt - job.queuedAt);
  else if (job.status === "IN_QUEUE") view.delayTime = Math.max(0, now - job.queuedAt);
  if (job.startedAt !== undefined && job.completedAt !== undefined) view.executionTime = Math.max(0, job.completedAt - job.startedAt);
  if (job.output !== undefined) view.output = job.output;
  if (job.error !== undefined) view.error = job.error;
  if (job.workerId !== undefined) view.workerId = job.workerId;
  if (job.retries > 0) view.retries = job.retries;
  return view;
}

export interface StreamItem {
  output: unknown;
  metrics?: Record<string, number | string>;
}

export interface HealthCounts {
  jobs: { completed: number; failed: number; inProgress: number; inQueue: number; retried: number };
  workers: { idle: number; initializing: number; ready: number; running: number; throttled: number; unhealthy: number };
}
