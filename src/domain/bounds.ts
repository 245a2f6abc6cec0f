/**
 * Bounds minipod sets on numbers the specification leaves open, so that no value a client, a
 * config or a flag can send breaks the runtime: past each one the answer is a 400 (or a start-up
 * error) naming the field, never a 500 or a crash. The specification's own numbers are in
 * `limits.ts`.
 */

const HOUR_MS = 3_600_000;

/**
 * The latest virtual time, 9999-01-01T00:00:00Z. Times stay four-digit years, as RFC 3339 (the
 * billing and pod times) and Python's `datetime` (the service's own library) require, and job ids
 * keep their 12 hex digits of milliseconds (which last until the year 10889). The year left before
 * 9999 ends is room for every deadline and billing bucket counted from a time before it (a job's
 * deadlines are days away at most, a bucket a year). The clock never moves past it.
 */
export const VIRTUAL_TIME_MAX_MS = 253_370_764_800_000;

/** The earliest virtual time: the epoch (timers, ids and buckets count from it). */
export const VIRTUAL_TIME_MIN_MS = 0;

/**
 * Fastest real clock: a million virtual ms per wall ms (a virtual day every 86 wall ms). Faster,
 * a wall-clock timer cannot be armed finely enough for the virtual timers it stands for.
 */
export const CLOCK_SPEED_MAX = 1_000_000;

/**
 * Most workers an endpoint may keep (`workersMin`) or scale to (`workersMax`). Each simulated
 * worker is an object and a timer or two; the real service caps workers per account far lower.
 */
export const ENDPOINT_WORKERS_LIMIT = 1000;

/** Longest simulated cold start of a worker. */
export const ENDPOINT_COLD_START_MAX_MS = HOUR_MS;

/**
 * Most fault rules that may still fire (live) at once, and most spent ones kept listed. Every
 * service request is matched against the live rules in turn: 5,000 of them made `/run` 16 times
 * slower. Past the live bound a new rule is refused with 409; past the spent one the oldest spent
 * rule leaves the list.
 */
export const FAULT_RULES_LIVE_MAX = 1000;
export const FAULT_RULES_SPENT_KEPT = 1000;

/** Largest `Retry-After` an injected `http` fault may send: a day, in seconds. */
export const FAULT_RETRY_AFTER_MAX_S = 86_400;

/** Most requests the journal may be told to keep in memory or in the database. */
export const JOURNAL_MAX_ENTRIES_LIMIT = 1_000_000;
/** Bytes of request bodies the journal keeps in all, by default and at most (`journal.maxBodyBytes`). */
export const JOURNAL_BODY_BYTES_DEFAULT = 32 * 1024 * 1024;
export const JOURNAL_BODY_BYTES_LIMIT = 1024 * 1024 * 1024;

/**
 * Bytes the in-memory database (no `--db`) may hold, by default, at least and at most
 * (`memory.databaseBytes`): jobs within result retention, their stream chunks, the journal. Past
 * it, a write is refused with 507 as a full disk's is. A `--db` file is bounded by its disk.
 */
export const MEMORY_DATABASE_BYTES_DEFAULT = 1024 * 1024 * 1024;
export const MEMORY_DATABASE_BYTES_MIN = 16 * 1024 * 1024;
export const MEMORY_DATABASE_BYTES_LIMIT = 64 * 1024 * 1024 * 1024;

/**
 * Rows of new jobs an in-memory database (no `--db`) keeps in memory before writing them to
 * SQLite, by default and at most (`memory.heldJobRows`), and their bytes at most
 * (`memory.heldJobBytes`; by default a share of node's heap limit, `HELD_JOB_HEAP_SHARE`): a job's
 * row is written when something reads jobs with SQL, past either bound (the oldest, to make room),
 * or once the emulator is idle; one whose retention ends first is never written. 0 rows writes
 * every job at the end of its turn, as a `--db` file does. A held job is the job object the store
 * keeps anyway, about 570 bytes of heap for a small one.
 */
export const HELD_JOB_ROWS_DEFAULT = 1_000_000;
export const HELD_JOB_ROWS_LIMIT = 10_000_000;
export const HELD_JOB_BYTES_LIMIT = 16 * 1024 * 1024 * 1024;
/** Without `memory.heldJobBytes`, the rows held take at most this share of node's heap limit (an eighth: 518 MB of node's 4 GB default, 54 MB with `--max-old-space-size=384`). */
export const HELD_JOB_HEAP_SHARE = 1 / 8;
/** Real ms without a job written after which the rows held are written, by default and at most (`memory.heldJobIdleMs`). */
export const HELD_JOB_IDLE_MS_DEFAULT = 1_000;
export const HELD_JOB_IDLE_MS_LIMIT = 3_600_000;

/**
 * Bytes of request bodies read and not yet handled, of all requests at once, by default, at least
 * and at most (`memory.requestBodyBytes`). Each body is bounded by its route's limit (20 MB at
 * most); this bounds how many arrive together. Past it a body is refused with 503 and Retry-After
 * while it arrives. The least is above the largest body limit, so one request always fits.
 */
export const REQUEST_BODY_BYTES_DEFAULT = 128 * 1024 * 1024;
export const REQUEST_BODY_BYTES_MIN = 32 * 1024 * 1024;
export const REQUEST_BODY_BYTES_LIMIT = 16 * 1024 * 1024 * 1024;

/** Snapshots held in memory at once, by default (`snapshots.maxCount`). */
export const SNAPSHOTS_MAX_COUNT_DEFAULT = 20;
/** Total size of the snapshots held in memory, by default (`snapshots.maxBytes`): 512 MiB. */
export const SNAPSHOTS_MAX_BYTES_DEFAULT = 512 * 1024 * 1024;
/** Largest `snapshots.maxCount` and `snapshots.maxBytes` (1,000 snapshots, 16 GiB). */
export const SNAPSHOTS_MAX_COUNT_LIMIT = 1000;
export const SNAPSHOTS_MAX_BYTES_LIMIT = 16 * 1024 * 1024 * 1024;

/**
 * Most buckets a billing query may span (`bucketSize` from `startTime` to `endTime`): 10,000 hours
 * is over a year, 10,000 days 27 years. Each bucket of each resource is a record built in memory.
 */
export const BILLING_BUCKETS_MAX = 10_000;

/** Largest REST quota (`rateLimits.rest.*`): the largest integer an RFC 9651 header (`RateLimit-Policy`) carries. */
export const RATE_LIMIT_QUOTA_MAX = 999_999_999_999_999;

/** Largest price of the config (`pricing.*`, USD per unit): amounts billed stay finite numbers. */
export const PRICE_MAX_USD = 1_000_000;

/**
 * The GraphQL field extension that carries what a field costs, as the service part that resolves
 * it declares it (`cost`: the items of a list, the weight of a costly resolver), read by the
 * query cost (http/routes/graphql/cost.ts).
 */
export const GRAPHQL_COST_EXTENSION = "minipodCost";

/** What a GraphQL field costs: its list's expected items, and its resolver's weight (a plain field is 1). */
export interface GraphQLFieldCost {
  items?: number;
  weight?: number;
}
