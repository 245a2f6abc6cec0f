/**
 * What a test can look at after the fact: each job's timeline, every webhook attempt, and the
 * request journal. Ports only; `store/` keeps them in SQLite.
 */
import type { JobStatus } from "./job.js";

export interface JobEvent {
  jobId: string;
  endpointId: string;
  /** Virtual time. */
  at: number;
  from: JobStatus | undefined;
  /** The state after the event; undefined when the job was deleted. */
  to: JobStatus | undefined;
  cause: string;
}

export interface WebhookDelivery {
  jobId: string;
  endpointId: string;
  url: string;
  /** 1 for the first try, then 2 and 3. */
  attempt: number;
  /** The receiver's HTTP status, when it answered. */
  status: number | undefined;
  /** Why it failed, when it did not answer (refused, timed out, ...). */
  error: string | undefined;
  /** Virtual time of the attempt. */
  at: number;
}

export interface JournalEntry {
  method: string;
  path: string;
  /** The query string, without its `?`, when the request had one. */
  query: string | undefined;
  endpoint: string | undefined;
  operation: string | undefined;
  status: number;
  /** Virtual time the request arrived. */
  at: number;
  durationMs: number;
  /** The request body with secrets redacted (not kept past 64 KB), when it had one. */
  body: unknown;
  /**
   * The body of an error answer (status 400 and above): the problem+json as sent, secrets
   * redacted, or its first `RESPONSE_KEPT_CHARS` characters as a string when it is longer.
   */
  response: unknown;
}

/**
 * What the gate records of a request: the entry, with the bodies still as sent (`responseText`
 * only for errors).
 */
export type RequestRecord = Omit<JournalEntry, "body" | "response"> & { bodyText: string | undefined; responseText: string | undefined };

export interface JournalFilter {
  endpoint?: string | undefined;
  operation?: string | undefined;
  status?: number | undefined;
  /** The worker protocol's requests (`WORKER_OPERATIONS`): left out (`exclude`) or alone (`only`); both by default. */
  worker?: "exclude" | "only" | undefined;
  limit?: number | undefined;
}

export interface ObservabilityStore {
  appendEvent(e: JobEvent): void;
  events(jobId: string): JobEvent[];
  appendDelivery(d: WebhookDelivery): void;
  deliveries(jobId?: string): WebhookDelivery[];
  /** A request as answered; its body (raw text) is redacted and cut when the row is written. */
  appendRequest(r: RequestRecord): void;
  requests(f: JournalFilter): { requests: JournalEntry[]; count: number };
  clearRequests(): number;
  /**
   * Keeps the newest timeline rows (a row: one job's events written together), timeline events
   * waiting to be written, and webhook attempts.
   */
  trimLogs(keep: { timelineRows: number; timelineEvents: number; deliveries: number }): void;
  /** Keeps the newest `max` journal entries. */
  trimRequests(max: number): void;
  clearAll(): void;
  /** Writes rows held back for the end of the event-loop turn (before a snapshot, export or close). */
  flush(): void;
}
