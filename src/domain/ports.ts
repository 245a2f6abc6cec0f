import type { RawJson } from "./json-text.js";
/**
 * What the domain needs from storage. `store/` implements these with SQLite; the domain never
 * sees SQL.
 */
import type { Job, JobStatus, Lane, StreamItem } from "./job.js";
import type { EndpointSpec } from "./endpoint.js";

/** Which jobs a listing wants; newest first. */
export interface JobFilter {
  endpointId?: string | undefined;
  status?: JobStatus | undefined;
  /** Only jobs whose id contains this text. */
  idContains?: string | undefined;
  limit: number;
  offset: number;
}

/** A job without its payloads (input, output, error, s3Config), for listings. */
export type JobSummary = Omit<Job, "input" | "output" | "error" | "s3Config">;

export interface JobStore {
  insert(job: Job): void;
  /**
   * A large payload (a `RawJson` past the store's bound) written ahead of the job write that will
   * refer to it, over as many turns as it takes, so that no one write holds the event loop long;
   * undefined when the payload is small enough to go with its job. Rejects when it cannot be
   * written (a full disk): nothing refers to it then.
   */
  stagePayload?(value: RawJson): Promise<RawJson> | undefined;
  /** Drops a staged payload no job came to refer to (its submission was refused). */
  releasePayload?(value: unknown): void;
  get(id: string): Job | undefined;
  /**
   * Writes the job: every field, or only the `changed` ones (a transition touches a few of 25).
   * A job whose row is gone is written whole again. `from`: the job `job` was made from; when it
   * is the store's current version, `job` is kept as it is instead of applying `changed` to a copy
   * of that version.
   */
  save(job: Job, changed?: readonly (keyof Job)[], from?: Job): void;
  delete(id: string): void;
  /** The oldest queued job of the endpoint's lane (FIFO by queueSeq); `/run` traffic by default. */
  nextQueued(endpointId: string, lane?: Lane): Job | undefined;
  /** Queued jobs of the lane that may trigger scaling (not lowPriority), counted up to `limit`. */
  countScalingDemand(endpointId: string, limit: number, lane?: Lane): number;
  /** Whether any job waits in the endpoint's lane. */
  hasQueued(endpointId: string, lane: Lane): boolean;
  /** The batch's requests (jobs carrying its id), counted by status. */
  countByBatch(batchId: string): Record<JobStatus, number>;
  /** One page of the batch's requests, in the order they were added (whatever retries did to their queue positions). */
  listBatch(batchId: string, offset: number, limit: number): Job[];
  /** Every request of the batch, id and status only. */
  batchJobIds(batchId: string): { id: string; status: JobStatus }[];
  countByStatus(endpointId: string): Record<JobStatus, number>;
  /** Jobs waiting or running, all endpoints. */
  countActive(): number;
  sumRetries(endpointId: string): number;
  /** Deletes every queued `/run` job of the endpoint (batch requests stay); returns their ids. */
  purgeQueued(endpointId: string): string[];
  /**
   * Up to `limit` jobs whose next deadline is at or before `now`, earliest first, and the deadline
   * of the first job after them (due too when more than `limit` are), read in one query.
   */
  due(now: number, limit: number): { jobs: Job[]; next: number | undefined };
  nextDeadline(): number | undefined;
  /** One page of jobs matching the filter, newest first, and how many match in all. */
  list(filter: JobFilter): { jobs: JobSummary[]; total: number };
  /** Jobs in a status, any endpoint (restart recovery). */
  listByStatus(status: JobStatus): Job[];
  maxQueueSeq(): number;
  appendChunks(jobId: string, items: StreamItem[]): void;
  chunkCount(jobId: string): number;
  /** Chunks from index `from` on (0-based), in order. */
  chunks(jobId: string, from: number): StreamItem[];
  clearChunks(jobId: string): void;
  deleteEndpointJobs(endpointId: string): void;
  deleteAll(): void;
  /** Runs `fn` and writes what it changed in one transaction. */
  tx<T>(fn: () => T): T;
  /**
   * Writes now what waits for the end of the turn. Writes are gathered during a turn of the
   * event loop and committed at its end; every read that needs the database flushes first.
   */
  flush(): void;
  /** Settles once every write made so far is committed; undefined when nothing waits. */
  whenDurable(): Promise<void> | undefined;
}

/**
 * The endpoints the engine serves, in creation order. The generic document store of the
 * management resources keeps them (kind "endpoint"): the same operations as every resource's.
 */
export interface EndpointStore {
  list(): EndpointSpec[];
  get(id: string): EndpointSpec | undefined;
  /** Inserts or replaces the whole endpoint; a replaced one keeps its place in the order. */
  save(spec: EndpointSpec): void;
  delete(id: string): boolean;
  deleteAll(): void;
}
