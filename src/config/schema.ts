import { z } from "zod";
import { OBSERVE_CONFIG } from "./observe-schema.js";
import {
  ENDPOINT_COLD_START_DEFAULT_MS,
  ENDPOINT_IDLE_TIMEOUT_DEFAULT_S,
  ENDPOINT_WORKERS_MAX_DEFAULT,
  ENDPOINT_WORKERS_MIN_DEFAULT,
  EXECUTION_TIMEOUT_MAX_MS,
  EXECUTION_TIMEOUT_MIN_MS,
} from "../domain/limits.js";
import { REST_V2_RESOURCES } from "../domain/surfaces.js";
import { AuthConfigSchema } from "./auth-schema.js";
import { RATE_LIMITS_DEFAULTS, RateLimitsConfigSchema } from "./rate-limit-schema.js";
import { ENDPOINT_MANAGEMENT_CONFIG, MANAGEMENT_CONFIG, checkManagementConfig, configVolumeId, resolveEndpointHandlers } from "./management-schema.js";
import { PODS_CONFIG, checkPodsConfig } from "./pods-schema.js";
import { WORKERS_CONFIG } from "./workers-schema.js";

/** Endpoint ids appear in URLs and real clients check job ids with the same pattern. */
export const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

export const EndpointConfigSchema = z
  .strictObject({
    id: z.string().min(1).max(64).regex(ID_PATTERN, "expected letters, digits, '_' or '-'").describe("Endpoint id: the {endpoint_id} of /v2/{endpoint_id}/run"),
    name: z.string().min(1).optional().describe("Human-readable name; defaults to the id"),
    handler: z
      .union([
        z.string().min(1),
        // The object form of an HTTP worker; kept as its URL, which names it everywhere else.
        z.strictObject({ type: z.literal("http"), url: z.url().describe("The worker's local test server; jobs go to POST {url}/runsync") }).transform((h) => h.url),
      ])
      .optional()
      .describe(
        '"echo", "scripted", "external" (worker processes take jobs over HTTP), a name registered with createEmulator({ handlers }), a module path ("./fixtures/handlers/x.ts") relative to this file, or an HTTP worker ({ "type": "http", "url": "http://127.0.0.1:8000" } or the URL alone); default: the template\'s handler, else defaultHandler',
      ),
    workersMin: z.int().min(0).default(ENDPOINT_WORKERS_MIN_DEFAULT).describe("Workers kept warm"),
    workersMax: z.int().min(0).default(ENDPOINT_WORKERS_MAX_DEFAULT).describe("Most workers the endpoint scales to"),
    idleTimeout: z.int().min(0).default(ENDPOINT_IDLE_TIMEOUT_DEFAULT_S).describe("Seconds an idle worker lives before it is scaled down"),
    coldStartMs: z.int().min(0).default(ENDPOINT_COLD_START_DEFAULT_MS).describe("Virtual ms a new worker takes to start"),
    executionTimeoutMs: z
      .int()
      .min(EXECUTION_TIMEOUT_MIN_MS)
      .max(EXECUTION_TIMEOUT_MAX_MS)
      .optional()
      .describe("Default execution timeout of the endpoint's jobs (policy.executionTimeout overrides it); 600000 when unset"),
    ...ENDPOINT_MANAGEMENT_CONFIG,
  })
  .refine((e) => e.workersMin <= e.workersMax, { message: "workersMin must not exceed workersMax", path: ["workersMin"] });

export type EndpointConfig = z.infer<typeof EndpointConfigSchema>;

export const ClockConfigSchema = z.strictObject({
  mode: z.enum(["real", "manual"]).default("real").describe("real: virtual time follows wall time; manual: time moves only through /_emulator/clock/advance"),
  speed: z.number().positive().default(1).describe("Real mode: virtual ms per wall ms"),
  start: z
    .union([z.int().min(0), z.iso.datetime({ offset: true })])
    .optional()
    .describe("Virtual time at start (epoch ms or ISO 8601); default: the wall clock"),
});

export const ConfigSchema = z
  .strictObject({
    $schema: z.string().optional(),
    logLevel: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
    clock: ClockConfigSchema.default({ mode: "real", speed: 1 }),
    endpoints: z.array(EndpointConfigSchema).default([]).describe("Queue-based endpoints served at /v2/{id}"),
    ...MANAGEMENT_CONFIG,
    ...PODS_CONFIG,
    ...OBSERVE_CONFIG,
    ...WORKERS_CONFIG,
    auth: AuthConfigSchema.default({ keys: [] }).describe("API keys and their scopes"),
    rateLimits: RateLimitsConfigSchema.default(RATE_LIMITS_DEFAULTS).describe("REST quotas and queue rate limits, on the virtual clock"),
    controlKey: z
      .string()
      .min(1)
      .optional()
      .describe("When set, /_emulator/* needs Authorization: Bearer <controlKey> or X-Minipod-Control-Key: <controlKey>; set it whenever minipod listens beyond 127.0.0.1"),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.endpoints.forEach((e, i) => {
      if (seen.has(e.id)) ctx.addIssue({ code: "custom", message: `duplicate endpoint id "${e.id}"`, path: ["endpoints", i, "id"] });
      if (REST_V2_RESOURCES.has(e.id)) {
        ctx.addIssue({ code: "custom", message: `endpoint id "${e.id}" is reserved: /v2/${e.id} is a resource of the REST surface; choose another id`, path: ["endpoints", i, "id"] });
      }
      seen.add(e.id);
    });
    checkManagementConfig(config, ctx);
    checkPodsConfig(config, configVolumeId, ctx);
  })
  .transform(resolveEndpointHandlers);

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;
