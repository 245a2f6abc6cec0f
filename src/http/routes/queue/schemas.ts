import { z } from "@hono/zod-openapi";
import { JOB_STATUSES } from "../../../domain/job.js";
import { EXECUTION_TIMEOUT_MAX_MS, EXECUTION_TIMEOUT_MIN_MS, TTL_MAX_MS, TTL_MIN_MS } from "../../../domain/limits.js";
import { hasCredentials, WEBHOOK_CREDENTIALS_REFUSED, WEBHOOK_PROTOCOL } from "../../../domain/webhooks.js";
import { int } from "../../schemas.js";

// The bodies and answers of the queue's routes: what a job submission is, and how a job is shown.

// Strict, where the service is silent: a misspelt key (`executionTimout`) would otherwise leave the
// default in force without a word. Unknown top-level keys are dropped, as the service documents.
export const PolicySchema = z
  .strictObject({
    executionTimeout: int().min(EXECUTION_TIMEOUT_MIN_MS).max(EXECUTION_TIMEOUT_MAX_MS).optional().openapi({ description: "ms; default 600000 or the endpoint's executionTimeoutMs" }),
    lowPriority: z.boolean().optional().openapi({ description: "When true, the job does not trigger worker scaling" }),
    ttl: int().min(TTL_MIN_MS).max(TTL_MAX_MS).optional().openapi({ description: "ms from submission; default 86400000" }),
  })
  .openapi("ExecutionPolicy");

export const S3ConfigSchema = z
  .strictObject({
    accessId: z.string(),
    accessSecret: z.string().openapi({ description: "Stored for the handler only; never returned or logged" }),
    bucketName: z.string(),
    endpointUrl: z.string(),
    objectPath: z.string().optional(),
  })
  .openapi("S3Config");

export const SubmissionSchema = z
  .object({
    input: z.record(z.string(), z.unknown()).openapi({ description: "Parameters for the handler", example: { prompt: "hello" } }),
    webhook: z
      .url({ protocol: WEBHOOK_PROTOCOL, error: "expected an http:// or https:// URL" })
      .refine((url) => !hasCredentials(url), WEBHOOK_CREDENTIALS_REFUSED)
      .optional()
      .openapi({ description: "An http:// or https:// URL, POSTed the result when the job finishes" }),
    policy: PolicySchema.optional(),
    s3Config: S3ConfigSchema.optional(),
  })
  .openapi("JobSubmission");

const Status = z.enum(JOB_STATUSES).openapi("JobStatus");

export const JobViewSchema = z
  .object({
    id: z.string(),
    status: Status,
    delayTime: z.int().optional().openapi({ description: "ms the job waited before a worker started it" }),
    executionTime: z.int().optional().openapi({ description: "ms the worker ran it" }),
    output: z.unknown().optional(),
    error: z.string().optional().openapi({ description: "Present on FAILED (and TIMED_OUT) jobs" }),
    workerId: z.string().optional(),
    retries: z.int().optional(),
  })
  .openapi("Job");

export const IdStatusSchema = z.object({ id: z.string(), status: Status }).openapi("JobAck");

export const StreamSchema = z
  .object({
    status: Status,
    stream: z.array(z.object({ output: z.unknown(), metrics: z.record(z.string(), z.union([z.number(), z.string()])).optional() })),
    error: z.string().optional(),
  })
  .openapi("StreamResult");

export const HealthSchema = z
  .object({
    jobs: z.object({ completed: z.int(), failed: z.int(), inProgress: z.int(), inQueue: z.int(), retried: z.int() }),
    workers: z.object({ idle: z.int(), initializing: z.int(), ready: z.int(), running: z.int(), throttled: z.int(), unhealthy: z.int() }),
  })
  .openapi("Health");

export const MetricsSchema = z
  .object({
    workers: z.object({ idle: z.int(), initializing: z.int(), ready: z.int(), running: z.int(), throttled: z.int(), unhealthy: z.int() }),
    readyWorkers: z.array(z.string()),
  })
  .openapi("Metrics");

export const PurgeSchema = z.object({ removed: z.int(), status: z.literal("completed") }).openapi("PurgeResult");
