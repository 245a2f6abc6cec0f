import { z } from "zod";
import { RATE_LIMIT_QUOTA_MAX } from "../domain/bounds.js";
import {
  LB_RATE_LIMIT_CONCURRENT_DEFAULT,
  LB_RATE_LIMIT_REQUESTS_DEFAULT,
  QUEUE_REQUESTS_PER_WORKER_DEFAULT,
  REST_RATE_LIMIT_DAY_DEFAULT,
  REST_RATE_LIMIT_HOUR_DEFAULT,
  REST_RATE_LIMIT_MINUTE_DEFAULT,
} from "../domain/limits.js";

const REST_DEFAULTS = { minute: REST_RATE_LIMIT_MINUTE_DEFAULT, hour: REST_RATE_LIMIT_HOUR_DEFAULT, day: REST_RATE_LIMIT_DAY_DEFAULT };
const QUEUE_DEFAULTS = { requestsPerWorker: QUEUE_REQUESTS_PER_WORKER_DEFAULT };
const LB_DEFAULTS = { requests: LB_RATE_LIMIT_REQUESTS_DEFAULT, concurrent: LB_RATE_LIMIT_CONCURRENT_DEFAULT };

export const RestRateLimitConfigSchema = z.strictObject({
  minute: z.int().min(1).max(RATE_LIMIT_QUOTA_MAX).default(REST_DEFAULTS.minute).describe("Requests per API key per UTC minute"),
  hour: z.int().min(1).max(RATE_LIMIT_QUOTA_MAX).default(REST_DEFAULTS.hour).describe("Requests per API key per UTC hour"),
  day: z.int().min(1).max(RATE_LIMIT_QUOTA_MAX).default(REST_DEFAULTS.day).describe("Requests per API key per UTC day"),
});

export const QueueRateLimitConfigSchema = z.strictObject({
  requestsPerWorker: z
    .int()
    .min(0)
    .default(QUEUE_DEFAULTS.requestsPerWorker)
    .describe("Dynamic queue limit: an operation allows max(base, running workers × requestsPerWorker) requests per 10 s"),
});

export const LoadBalancerRateLimitConfigSchema = z.strictObject({
  requests: z
    .int()
    .min(1)
    .max(RATE_LIMIT_QUOTA_MAX)
    .default(LB_DEFAULTS.requests)
    .describe("Requests per endpoint per 10 s of virtual time (raised to running workers × queue.requestsPerWorker when that is higher)"),
  concurrent: z.int().min(1).max(RATE_LIMIT_QUOTA_MAX).default(LB_DEFAULTS.concurrent).describe("Requests per endpoint being answered at once, those waiting for a worker included"),
});

export const RateLimitsConfigSchema = z.strictObject({
  enabled: z.boolean().default(true).describe("false turns every rate and concurrency limit off (load tests); payload limits stay"),
  rest: RestRateLimitConfigSchema.default(REST_DEFAULTS).describe("REST surface (/v1, /v2 resources) quotas per API key, on the virtual clock"),
  queue: QueueRateLimitConfigSchema.default(QUEUE_DEFAULTS).describe("Queue operations: the specification's per-endpoint table plus the dynamic rule"),
  loadBalancer: LoadBalancerRateLimitConfigSchema.default(LB_DEFAULTS).describe("Requests to load-balancing endpoints (operation `lb`), per endpoint, as a row of the queue's table"),
});

export type RateLimitsConfig = z.infer<typeof RateLimitsConfigSchema>;

export const RATE_LIMITS_DEFAULTS: RateLimitsConfig = { enabled: true, rest: REST_DEFAULTS, queue: QUEUE_DEFAULTS, loadBalancer: LB_DEFAULTS };
