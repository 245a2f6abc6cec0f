/**
 * Every number of the specification, once. The comment on each names the line of the
 * specification ("Limits" and "Job submission body" sections) it comes from.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "`/runsync` wait | 1000 to 300000 ms, default 90000" */
export const RUNSYNC_WAIT_MIN_MS = 1000;
export const RUNSYNC_WAIT_MAX_MS = 300_000;
export const RUNSYNC_WAIT_DEFAULT_MS = 90_000;

/**
 * `/status-sync` and `/stream` holds: not in the specification; real clients send `wait` in the
 * same range. An empty `/stream` poll without `wait` is held 5 s (virtual, and never longer in wall
 * time): the service's Python client reads `/stream` with a 10 s read timeout, so a hold of 10 s
 * (what the real service is reported to use) times out about half of its polls; half of it leaves
 * room for a loaded machine.
 */
export const STATUS_SYNC_WAIT_DEFAULT_MS = 90_000;
export const STREAM_HOLD_DEFAULT_MS = 5_000;

/** "executionTimeout | default 600000 ms; 5 seconds to 7 days" */
export const EXECUTION_TIMEOUT_DEFAULT_MS = 600_000;
export const EXECUTION_TIMEOUT_MIN_MS = 5 * SECOND;
export const EXECUTION_TIMEOUT_MAX_MS = 7 * DAY;

/** "ttl | default 86400000 ms; 10 seconds to 7 days; starts at submission" */
export const TTL_DEFAULT_MS = DAY;
export const TTL_MIN_MS = 10 * SECOND;
export const TTL_MAX_MS = 7 * DAY;

/** "result retention, `/run` | 30 minutes after completion" */
export const RETENTION_RUN_MS = 30 * MINUTE;
/** "result retention, `/runsync` | 1 minute (up to 5 minutes maximum)" */
export const RETENTION_RUNSYNC_MS = 1 * MINUTE;

// Batch jobs (docs.runpod.io/serverless/batch-jobs, "Limits" and "API walkthrough").
/** "Active batches per endpoint | 10" (a DRAFT batch, or a FINALIZED one whose requests are not all done). */
export const BATCH_ACTIVE_MAX = 10;
/** "Requests per batch | 5,000" */
export const BATCH_REQUESTS_MAX = 5_000;
/** "Request body size is limited to 10 MiB per call" (create and append). */
export const BATCH_APPEND_MAX_BYTES = 10 * 1024 * 1024;
/** A page of a batch's requests: 50 by default (the docs' example), at most 1,000 (not documented). */
export const BATCH_PAGE_DEFAULT = 50;
export const BATCH_PAGE_MAX = 1_000;
/**
 * How long a batch request waits, and its result is kept (not documented; the service promises a
 * batch within 24 hours): the longest ttl, so a batch's results outlive a night's run.
 */
export const BATCH_TTL_MS = 7 * DAY;
export const RETENTION_BATCH_MS = 7 * DAY;

/**
 * Levels of arrays and objects a JSON body may nest (not in the specification). A job's input is
 * stored and copied as JSON text, and V8's `JSON.stringify` overflows its stack near 4,500 levels;
 * Python's `json`, which workers of the real service use, stops near 1,000.
 */
export const JSON_DEPTH_MAX = 1000;

/** "`/runsync` payload | 20 MB", "`/run` payload | 10 MB" (MB = 1024 * 1024 bytes) */
export const RUNSYNC_PAYLOAD_MAX_BYTES = 20 * 1024 * 1024;
export const RUN_PAYLOAD_MAX_BYTES = 10 * 1024 * 1024;
/**
 * Bodies of `/openai/*` requests: not in the specification. Each becomes a job answered in the
 * same request, as `/runsync` is, so the `/runsync` limit applies.
 */
export const OPENAI_PAYLOAD_MAX_BYTES = RUNSYNC_PAYLOAD_MAX_BYTES;
/** "streamed chunk | 1 MB" */
export const STREAM_CHUNK_MAX_BYTES = 1024 * 1024;

/** "network volume size | 10 to 4096 GB" */
export const NETWORK_VOLUME_SIZE_MIN_GB = 10;
export const NETWORK_VOLUME_SIZE_MAX_GB = 4096;

/** "webhook retries | 2 more attempts, 10 seconds apart" */
export const WEBHOOK_EXTRA_ATTEMPTS = 2;
export const WEBHOOK_RETRY_DELAY_MS = 10 * SECOND;

/** Endpoint defaults (v1 endpoint: `idleTimeout` 5 s by default). */
export const ENDPOINT_IDLE_TIMEOUT_DEFAULT_S = 5;
export const ENDPOINT_WORKERS_MIN_DEFAULT = 0;
export const ENDPOINT_WORKERS_MAX_DEFAULT = 3;
/** Simulated cold start of a new worker; not in the specification, configurable per endpoint. */
export const ENDPOINT_COLD_START_DEFAULT_MS = 1000;

/**
 * v1 endpoint fields (real-clients.md, "v1 Endpoint fields": defaults `gpuCount` 1, `idleTimeout` 5,
 * `scalerValue` 4; rest-v1 EndpointCreateInput: `idleTimeout` 1..3600, `name` at most 191 characters).
 */
export const ENDPOINT_GPU_COUNT_DEFAULT = 1;
export const ENDPOINT_SCALER_VALUE_DEFAULT = 4;
export const ENDPOINT_IDLE_TIMEOUT_MIN_S = 1;
export const ENDPOINT_IDLE_TIMEOUT_MAX_S = 3600;
export const ENDPOINT_NAME_MAX_LENGTH = 191;

/**
 * Host-local persistent storage of a pod or template (v1 `volumeInGb`, v2 `mounts.persistent.size`):
 * none (0) or at least this many GB. The service's v2 description: "Upstream enforces a 10 GB floor".
 */
export const PERSISTENT_MOUNT_MIN_GB = 10;

/** Largest body of a management request (endpoints, templates, volumes); not in the specification. */
export const MANAGEMENT_BODY_MAX_BYTES = 1024 * 1024;

export const TIME = { SECOND, MINUTE, HOUR, DAY } as const;

/**
 * The worker side (worker processes of "external" endpoints; not in the specification). Worker
 * processes live in wall time, so these are wall ms.
 *
 * The heartbeat period the service gives its workers (`RUNPOD_PING_INTERVAL`, the library's
 * default 10 s); the library reads it in whole seconds, so at least 1000.
 */
export const WORKER_PING_INTERVAL_DEFAULT_MS = 10 * SECOND;
export const WORKER_PING_INTERVAL_MIN_MS = 1 * SECOND;
/** A worker silent for this many heartbeat periods is lost (its own ping gives up after two). */
export const WORKER_LOST_AFTER_PINGS = 3;
/**
 * How long an empty job-take, job-take-batch or job-stop poll is held open. The library gives up
 * on each after 90 s (`jobs_fetcher_timeout`, `stop_signals_fetcher_timeout`) and asks again, so
 * the hold stays well below that.
 */
export const WORKER_POLL_HOLD_DEFAULT_MS = 20 * SECOND;
export const WORKER_POLL_HOLD_MAX_MS = 85 * SECOND;
/**
 * How long jobs queued on an endpoint with no live worker process wait for one to call (to boot,
 * or to be restarted) before the clock may skip past them again (minipod's own: the time a Python
 * worker with heavy imports takes to start on a busy machine; `lostAfterMs` when longer).
 */
export const WORKER_START_WAIT_MS = 30 * SECOND;
/** How long a lost or stopped worker stays listed (dashboard, worker listings) before it is forgotten. */
export const WORKER_FORGET_AFTER_MS = 10 * MINUTE;
/**
 * Worker ids one endpoint keeps records of (minipod's own bound: each record is memory and a line
 * of /health and /_emulator/workers). A new id beyond it takes the place of the longest-silent lost
 * or stopped worker; when every record is a live worker, the new one is refused with 429.
 */
export const WORKER_RECORDS_MAX = 1000;
/** API keys whose REST quotas are counted at once (minipod's own bound: under open auth any key is
 * accepted, each with counters); beyond it the key counted first leaves, its counts with it. */
export const REST_RATE_KEYS_MAX = 10_000;
/**
 * An error answer to job-take or job-stop waits this long: the library asks again at once after
 * any answer but 204, so a misconfigured worker would otherwise send thousands a second.
 */
export const WORKER_ERROR_DELAY_MS = 1 * SECOND;
/**
 * Wall ms a worker's job-stop poll is held, while a job minipod ended may still run on it, before
 * that job's stop is sent again (the worker library can hear a stop just before it starts the job).
 */
export const STOP_REPEAT_MS = 250;
/**
 * A job whose worker was lost goes back to the queue while its `retries` is below this; then it
 * fails (a job that kills every worker that takes it would otherwise run for ever).
 */
export const WORKER_LOST_REQUEUES_MAX = 3;
/** Jobs one job-take-batch may ask for. */
export const WORKER_BATCH_MAX = 1000;

/**
 * REST surface quotas per API key: "Rate limit exceeded for a window (minute, hour or day on the
 * REST surface)". The quota values are "not shown" in the specification; these are the real
 * service's documented example values (`"minute";q=60;w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400`).
 */
export const REST_RATE_LIMIT_WINDOWS = [
  { name: "minute", ms: MINUTE },
  { name: "hour", ms: HOUR },
  { name: "day", ms: DAY },
] as const;
export const REST_RATE_LIMIT_MINUTE_DEFAULT = 60;
export const REST_RATE_LIMIT_HOUR_DEFAULT = 3000;
export const REST_RATE_LIMIT_DAY_DEFAULT = 50_000;

/** "Per-endpoint, per-operation rate limits on queue operations": "Rate limit" is per 10 seconds. */
export const QUEUE_RATE_WINDOW_MS = 10 * SECOND;

/**
 * The table of "Limits": requests per 10 s and concurrent requests, per endpoint and operation.
 * `concurrent: undefined` is "none stated" (`/purge-queue`).
 */
export const QUEUE_RATE_LIMITS: Readonly<Record<string, { method: "GET" | "POST"; requests: number; concurrent: number | undefined }>> = {
  runsync: { method: "POST", requests: 2000, concurrent: 400 },
  run: { method: "POST", requests: 1000, concurrent: 200 },
  status: { method: "GET", requests: 2000, concurrent: 400 },
  stream: { method: "GET", requests: 2000, concurrent: 400 },
  cancel: { method: "POST", requests: 100, concurrent: 20 },
  "purge-queue": { method: "POST", requests: 2, concurrent: undefined },
  openai: { method: "POST", requests: 2000, concurrent: 400 },
  requests: { method: "GET", requests: 10, concurrent: 2 },
};

/**
 * "Dynamic limit: the effective limit is the higher of the base limit above and
 * `number_of_running_workers x requests_per_worker`"; requests_per_worker is "not shown", so this
 * default is the emulator's choice (per 10 s window), configurable as `rateLimits.queue.requestsPerWorker`.
 */
export const QUEUE_REQUESTS_PER_WORKER_DEFAULT = 10;

/**
 * Requests to a load-balancing endpoint (`/lb/{endpoint_id}/...`, any method and path), per
 * endpoint: the service documents no limit for them, so they take the queue's machinery with one
 * row of their own, the values of the queue's OpenAI row (requests answered by a worker's server
 * as they come); configurable as `rateLimits.loadBalancer`.
 */
export const LB_RATE_LIMIT_REQUESTS_DEFAULT = 2000;
export const LB_RATE_LIMIT_CONCURRENT_DEFAULT = 400;

/**
 * Load-balancing endpoints (the service's load-balancing overview): a request that finds no ready
 * worker waits up to 2 minutes, then gets 400 `{"error": "no workers available"}`; a request
 * processed longer than 5.5 minutes gets 524; payloads above 30 MB are refused.
 */
export const LB_NO_WORKER_WAIT_MS = 2 * 60 * SECOND;
export const LB_REQUEST_TIMEOUT_MS = 330 * SECOND;
export const LB_PAYLOAD_MAX_BYTES = 30 * 1024 * 1024;
/** Worker affinity: a strict request waits "up to ~5 minutes" for its worker to free up. */
export const LB_AFFINITY_WAIT_MS = 5 * 60 * SECOND;
/** Where a load-balancing worker answers health when `HEALTH_CHECK_PATH` is not set. */
export const LB_HEALTH_PATH_DEFAULT = "/ping";

/** A Flash build's artifact (the tar.gz `flash deploy` and `rp flash deploy` upload): kept in the database, in pieces. */
export const FLASH_ARTIFACT_MAX_BYTES = 64 * 1024 * 1024;
