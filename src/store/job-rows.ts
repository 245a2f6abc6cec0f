import type { Job, JobStatus } from "../domain/job.js";
import { fromText, jsonText } from "../domain/json-text.js";
import { nextDeadline } from "../domain/job.js";

/** How jobs map to rows of the `jobs` table, both ways. */

export interface JobRow {
  id: string;
  endpoint_id: string;
  kind: string;
  status: string;
  input: string;
  output: string | null;
  error: string | null;
  webhook: string | null;
  s3_config: string | null;
  execution_timeout_ms: number;
  ttl_ms: number;
  low_priority: number;
  created_at: number;
  queued_at: number;
  started_at: number | null;
  completed_at: number | null;
  worker_id: string | null;
  retries: number;
  attempt: number;
  queue_seq: number;
  expires_at: number;
  timeout_at: number | null;
  retain_until: number | null;
  deadline_at: number;
  stream_cursor: number;
  batch_id: string | null;
}

export const COLUMNS =
  "id, endpoint_id, kind, status, input, output, error, webhook, s3_config, execution_timeout_ms, ttl_ms, low_priority, created_at, queued_at, started_at, completed_at, worker_id, retries, attempt, queue_seq, expires_at, timeout_at, retain_until, deadline_at, stream_cursor, batch_id";
/** The columns a listing reads: the payloads are left out, so a page stays cheap whatever their size. */
export const SUMMARY_COLUMNS = COLUMNS.replace(/\b(input|output|error|s3_config)\b/g, (c) => (c === "input" ? "'{}' AS input" : `NULL AS ${c}`));
/** Optional filters in one prepared statement: a NULL parameter matches everything. */
export const LIST_WHERE = "(@endpoint IS NULL OR endpoint_id = @endpoint) AND (@status IS NULL OR status = @status) AND (@id IS NULL OR instr(id, @id) > 0)";
export const PARAMS = COLUMNS.split(", ").map(() => "?").join(", ");
export const UPDATES = COLUMNS.split(", ")
  .filter((c) => c !== "id")
  .map((c) => `${c} = excluded.${c}`)
  .join(", ");

/**
 * Hot reads (status, the scheduler's next job, due deadlines) fetch rows as arrays: better-sqlite3
 * builds a 25-key object per row slowly (about 9 µs); an array plus this literal takes about 4.
 * The literal follows COLUMNS, and the constructor checks that the statements agree.
 */
export const rowOf = (a: unknown[]): JobRow =>
  ({
    id: a[0],
    endpoint_id: a[1],
    kind: a[2],
    status: a[3],
    input: a[4],
    output: a[5],
    error: a[6],
    webhook: a[7],
    s3_config: a[8],
    execution_timeout_ms: a[9],
    ttl_ms: a[10],
    low_priority: a[11],
    created_at: a[12],
    queued_at: a[13],
    started_at: a[14],
    completed_at: a[15],
    worker_id: a[16],
    retries: a[17],
    attempt: a[18],
    queue_seq: a[19],
    expires_at: a[20],
    timeout_at: a[21],
    retain_until: a[22],
    deadline_at: a[23],
    stream_cursor: a[24],
    batch_id: a[25],
  }) as JobRow;
export const fromArray = (a: unknown[], read?: PayloadRead): Job => fromRow(rowOf(a), read);
/** Where `deadline_at` is in a row read as an array. */
export const DEADLINE_AT = COLUMNS.split(", ").indexOf("deadline_at");

const json = (v: unknown): string | null => (v === undefined ? null : jsonText(v));
const parse = (v: string | null): unknown => (v === null ? undefined : JSON.parse(v));
const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/** What a job's row holds for a payload (`input`, `output`): its JSON text, or a reference to where it is. */
export type PayloadColumn = (job: Job, field: "input" | "output", value: unknown) => string;
/** The payload's JSON text itself. */
export const inlinePayload: PayloadColumn = (_job, _field, value) => jsonText(value);

/** How a job is written to its row: each field, its column and how it is written. */
export interface JobColumns {
  /** In COLUMNS order (the store checks), with `deadline_at` derived from the job. */
  readonly WRITES: ReadonlyArray<readonly [column: string, field: keyof Job | null, write: (j: Job) => unknown]>;
  readonly WRITE_OF: ReadonlyMap<keyof Job, { column: string; write: (j: Job) => unknown }>;
  readonly DEADLINE_WRITE: (j: Job) => unknown;
  /** A row's values, in COLUMNS order. */
  readonly values: (j: Job) => unknown[];
  /** A row's values, in COLUMNS order, into `out` from `at` (a statement's parameters). */
  readonly fill: (j: Job, out: unknown[], at: number) => void;
}

/** The one mapping from jobs to rows, with payloads written by `payload`. */
export function jobColumns(payload: PayloadColumn = inlinePayload): JobColumns {
  const WRITES: JobColumns["WRITES"] = [
    ["id", "id", (j) => j.id],
    ["endpoint_id", "endpointId", (j) => j.endpointId],
    ["kind", "kind", (j) => j.kind],
    ["status", "status", (j) => j.status],
    ["input", "input", (j) => payload(j, "input", j.input)],
    ["output", "output", (j) => (j.output === undefined ? null : payload(j, "output", j.output))],
    ["error", "error", (j) => j.error ?? null],
    ["webhook", "webhook", (j) => j.webhook ?? null],
    ["s3_config", "s3Config", (j) => json(j.s3Config)],
    ["execution_timeout_ms", "executionTimeoutMs", (j) => j.executionTimeoutMs],
    ["ttl_ms", "ttlMs", (j) => j.ttlMs],
    ["low_priority", "lowPriority", (j) => (j.lowPriority ? 1 : 0)],
    ["created_at", "createdAt", (j) => j.createdAt],
    ["queued_at", "queuedAt", (j) => j.queuedAt],
    ["started_at", "startedAt", (j) => j.startedAt ?? null],
    ["completed_at", "completedAt", (j) => j.completedAt ?? null],
    ["worker_id", "workerId", (j) => j.workerId ?? null],
    ["retries", "retries", (j) => j.retries],
    ["attempt", "attempt", (j) => j.attempt],
    ["queue_seq", "queueSeq", (j) => j.queueSeq],
    ["expires_at", "expiresAt", (j) => j.expiresAt],
    ["timeout_at", "timeoutAt", (j) => j.timeoutAt ?? null],
    ["retain_until", "retainUntil", (j) => j.retainUntil ?? null],
    ["deadline_at", null, (j) => nextDeadline(j)],
    ["stream_cursor", "streamCursor", (j) => j.streamCursor],
    ["batch_id", "batchId", (j) => j.batchId ?? null],
  ];
  // A row's values by a plain loop: `WRITES.map` with a destructuring callback cost every job's
  // row an array, a closure call and a destructuring per column.
  const writes = WRITES.map(([, , write]) => write);
  // An output that is the input itself (the echo handler's) takes the input's text, made once.
  const inputAt = WRITES.findIndex(([column]) => column === "input");
  const outputAt = WRITES.findIndex(([column]) => column === "output");
  const fill = (j: Job, out: unknown[], at: number): void => {
    for (let i = 0; i < writes.length; i++) out[at + i] = i === outputAt && j.output === j.input ? out[at + inputAt] : writes[i]!(j);
  };
  return {
    WRITES,
    WRITE_OF: new Map(WRITES.filter(([, field]) => field !== null).map(([column, field, write]) => [field!, { column, write }])),
    DEADLINE_WRITE: WRITES.find(([column]) => column === "deadline_at")![2],
    values: (j) => {
      const row = new Array<unknown>(writes.length);
      fill(j, row, 0);
      return row;
    },
    fill,
  };
}

/** How a payload column is read: its text parsed when small, a `RawJson` when large (see `fromText`). */
export type PayloadRead = (column: string, small: (text: string) => unknown) => unknown;
const inlineRead: PayloadRead = (column, small) => small(column);

export function fromRow(r: JobRow, read: PayloadRead = inlineRead): Job {
  return {
    id: r.id,
    endpointId: r.endpoint_id,
    kind: r.kind as Job["kind"],
    status: r.status as JobStatus,
    // A large input stays its text: it is parsed only where a handler in this process needs it.
    input: read(r.input, fromText) as Job["input"],
    output: r.output === null ? undefined : read(r.output, fromText),
    error: opt(r.error),
    webhook: opt(r.webhook),
    s3Config: parse(r.s3_config) as Job["s3Config"],
    executionTimeoutMs: r.execution_timeout_ms,
    ttlMs: r.ttl_ms,
    lowPriority: r.low_priority === 1,
    createdAt: r.created_at,
    queuedAt: r.queued_at,
    startedAt: opt(r.started_at),
    completedAt: opt(r.completed_at),
    workerId: opt(r.worker_id),
    retries: r.retries,
    attempt: r.attempt,
    queueSeq: r.queue_seq,
    expiresAt: r.expires_at,
    timeoutAt: opt(r.timeout_at),
    retainUntil: opt(r.retain_until),
    streamCursor: r.stream_cursor,
    ...(r.batch_id === null ? {} : { batchId: r.batch_id }),
  };
}

