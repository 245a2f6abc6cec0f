import { z } from "zod";
import { OBSERVE_CONFIG } from "./observe-schema.js";
import {
  ENDPOINT_COLD_START_DEFAULT_MS,
  ENDPOINT_IDLE_TIMEOUT_DEFAULT_S,
  ENDPOINT_IDLE_TIMEOUT_MAX_S,
  ENDPOINT_WORKERS_MAX_DEFAULT,
  ENDPOINT_WORKERS_MIN_DEFAULT,
  EXECUTION_TIMEOUT_MAX_MS,
  EXECUTION_TIMEOUT_MIN_MS,
} from "../domain/limits.js";
import { CLOCK_SPEED_MAX, ENDPOINT_COLD_START_MAX_MS, ENDPOINT_WORKERS_LIMIT, FAULT_RULES_LIVE_MAX, VIRTUAL_TIME_MAX_MS, VIRTUAL_TIME_MIN_MS } from "../domain/bounds.js";
import { CLOCK_MODES } from "../domain/clock.js";
import { AuthConfigSchema } from "./auth-schema.js";
import { faultOperations, faultRuleSchema } from "./faults-schema.js";
import { OpenAiConfigSchema } from "./openai-schema.js";
import { RATE_LIMITS_DEFAULTS, RateLimitsConfigSchema } from "./rate-limit-schema.js";
import { BILLING_CONFIG } from "../services/billing/config.js";
import { CATALOG_CONFIG } from "../services/catalog/config.js";
import { ENDPOINT_MANAGEMENT_CONFIG, checkEndpointsConfig, resolveEndpointHandlers } from "../services/endpoints/config.js";
import { NETWORK_VOLUMES_CONFIG, checkNetworkVolumesConfig, configVolumeId } from "../services/network-volumes/config.js";
import { PODS_CONFIG, checkPodsConfig } from "../services/pods/config.js";
import { REGISTRY_AUTHS_CONFIG, checkRegistryAuthsConfig, configRegistryAuthId } from "../services/registry-auths/config.js";
import { TEMPLATES_CONFIG, checkTemplatesConfig } from "../services/templates/config.js";
import { SECURITY_CONFIG } from "./security-schema.js";
import { WORKERS_CONFIG } from "./workers-schema.js";
import { IMAGES_CONFIG } from "./images-schema.js";

/** Endpoint ids appear in URLs and real clients check job ids with the same pattern. */
export const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

export const EndpointConfigSchema = z
  .strictObject({
    id: z.string().min(1).max(64).regex(ID_PATTERN, "expected letters, digits, '_' or '-'").describe("Endpoint id: the {endpoint_id} of /v2/{endpoint_id}/run"),
    name: z.string().min(1).optional().describe("Human-readable name; defaults to the id"),
    type: z
      .enum(["QUEUE", "LOAD_BALANCER"])
      .default("QUEUE")
      .describe("QUEUE: jobs through /v2/{id}/run; LOAD_BALANCER: any request to /lb/{id}/... (or http://{id}.localhost:PORT/...) goes to a worker's HTTP server"),
    requestCount: z
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe("LOAD_BALANCER: requests one worker takes at once, and the scaler's target (REQUEST_COUNT); default 4"),
    handler: z
      .union([
        z.string().min(1),
        // The object form of an HTTP worker; kept as its URL, which names it everywhere else.
        z
          .strictObject({
            type: z.literal("http"),
            url: z.url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" }).describe("The worker's local test server; jobs go to POST {url}/runsync"),
          })
          .transform((h) => h.url),
      ])
      .optional()
      .describe(
        '"echo", "scripted", "openai" (OpenAI-compatible answers, see `openai`), "external" (worker processes take jobs over HTTP; on a LOAD_BALANCER endpoint, worker processes started by minipod worker serve its requests), a function (on a LOAD_BALANCER endpoint, a fetch handler: Request to Response), a name registered with createEmulator({ handlers }), a module path ("./fixtures/handlers/x.ts") relative to this file, or an HTTP worker ({ "type": "http", "url": "http://127.0.0.1:8000" } or the URL alone); default: the template\'s handler, else defaultHandler',
      ),
    workersMin: z.int().min(0).max(ENDPOINT_WORKERS_LIMIT).default(ENDPOINT_WORKERS_MIN_DEFAULT).describe("Workers kept warm"),
    workersMax: z.int().min(0).max(ENDPOINT_WORKERS_LIMIT).default(ENDPOINT_WORKERS_MAX_DEFAULT).describe("Most workers the endpoint scales to"),
    batchWorkersMax: z
      .int()
      .min(0)
      .max(ENDPOINT_WORKERS_LIMIT)
      .optional()
      .describe("Most batch workers: they run the endpoint's batch requests only, apart from its /run traffic; default workersMax"),
    idleTimeout: z.int().min(0).max(ENDPOINT_IDLE_TIMEOUT_MAX_S).default(ENDPOINT_IDLE_TIMEOUT_DEFAULT_S).describe("Seconds an idle worker lives before it is scaled down"),
    coldStartMs: z.int().min(0).max(ENDPOINT_COLD_START_MAX_MS).default(ENDPOINT_COLD_START_DEFAULT_MS).describe("Virtual ms a new worker takes to start"),
    executionTimeoutMs: z
      .int()
      .min(EXECUTION_TIMEOUT_MIN_MS)
      .max(EXECUTION_TIMEOUT_MAX_MS)
      .optional()
      .describe("Default execution timeout of the endpoint's jobs (policy.executionTimeout overrides it); 600000 when unset"),
    openai: OpenAiConfigSchema.optional(),
    ...ENDPOINT_MANAGEMENT_CONFIG,
  })
  .refine((e) => e.workersMin <= e.workersMax, { message: "workersMin must not exceed workersMax", path: ["workersMin"] })
  .refine((e) => e.type === "LOAD_BALANCER" || e.requestCount === undefined, { message: "requestCount is for LOAD_BALANCER endpoints; queue endpoints scale on their queue", path: ["requestCount"] })
  .refine((e) => e.type !== "LOAD_BALANCER" || e.handler !== "scripted", {
    message: 'the scripted handler answers queue jobs; a LOAD_BALANCER endpoint takes "external" (worker processes), a worker\'s URL, "openai", "echo" or a function (a fetch handler)',
    path: ["handler"],
  });

export const ClockConfigSchema = z.strictObject({
  mode: z
    .enum(CLOCK_MODES)
    .optional()
    .describe(
      "real: virtual time follows wall time; manual: time moves only through /_emulator/clock/advance; auto: follows wall time, and skips to the next timer whenever someone waits on virtual time and nothing runs on real time. Default: real for the minipod command, auto for createEmulator and the Python fixture",
    ),
  speed: z.number().positive().max(CLOCK_SPEED_MAX).default(1).describe("Real and auto modes: virtual ms per wall ms while time follows the wall"),
  start: z
    .union([
      z.int().min(VIRTUAL_TIME_MIN_MS).max(VIRTUAL_TIME_MAX_MS),
      z.iso
        .datetime({ offset: true })
        .refine((t) => Date.parse(t) >= VIRTUAL_TIME_MIN_MS && Date.parse(t) <= VIRTUAL_TIME_MAX_MS, `expected a time from 1970-01-01T00:00:00Z to ${new Date(VIRTUAL_TIME_MAX_MS).toISOString()}`),
    ])
    .optional()
    .describe("Virtual time at start (epoch ms or ISO 8601); default: the wall clock"),
});

/** The names of the REST surface of the services an emulator is built with: its collections on each version. */
export interface ServiceNames {
  v1: readonly string[];
  v2: readonly string[];
}

/**
 * The config of an emulator built with the services that serve `names`: their collections are
 * the operations fault rules may name, and ids no endpoint may take. The wiring builds it for the
 * services it builds (compose/config.ts); each service's part comes from its folder.
 */
export function configSchema(names: ServiceNames) {
  const { seed, ...observed } = OBSERVE_CONFIG;
  const FaultRuleSchema = faultRuleSchema(faultOperations([...names.v1, ...names.v2]));
  return z
    .strictObject({
      $schema: z.string().optional(),
      logLevel: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
      clock: ClockConfigSchema.default({ speed: 1 }),
      endpoints: z.array(EndpointConfigSchema).default([]).describe("Queue-based endpoints served at /v2/{id}"),
      ...TEMPLATES_CONFIG,
      ...NETWORK_VOLUMES_CONFIG,
      ...REGISTRY_AUTHS_CONFIG,
      ...PODS_CONFIG,
      ...BILLING_CONFIG,
      ...CATALOG_CONFIG,
      seed,
      faults: z.array(FaultRuleSchema).max(FAULT_RULES_LIVE_MAX).default([]).describe(`Fault rules active from the start (and after each reset), at most ${FAULT_RULES_LIVE_MAX}`),
      ...observed,
      ...SECURITY_CONFIG,
      ...WORKERS_CONFIG,
      ...IMAGES_CONFIG,
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
        if (names.v2.includes(e.id)) {
          ctx.addIssue({ code: "custom", message: `endpoint id "${e.id}" is reserved: /v2/${e.id} is a resource of the REST surface; choose another id`, path: ["endpoints", i, "id"] });
        }
        seen.add(e.id);
      });
      checkTemplatesConfig(config, ctx);
      checkNetworkVolumesConfig(config, ctx);
      checkEndpointsConfig(config, configVolumeId, ctx);
      checkRegistryAuthsConfig(config, ctx);
      checkPodsConfig(config, { volume: configVolumeId, registryAuth: configRegistryAuthId }, ctx);
    })
    .transform(resolveEndpointHandlers);
}

export type ConfigSchema = ReturnType<typeof configSchema>;
export type Config = z.infer<ConfigSchema>;
export type ConfigInput = z.input<ConfigSchema>;
