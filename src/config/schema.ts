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
import { faultOperations, faultRuleSchema, type EngineOperation, type FaultRuleInputOf, type FaultRuleSchema } from "./faults-schema.js";
import { OpenAiConfigSchema } from "./openai-schema.js";
import { RATE_LIMITS_DEFAULTS, RateLimitsConfigSchema } from "./rate-limit-schema.js";
import { DEFAULT_HANDLER } from "../domain/endpoint.js";
import type { ConfiguredService, EndpointFieldsOf, FieldsOf } from "./part.js";
import { SECURITY_CONFIG } from "./security-schema.js";
import { WORKERS_CONFIG } from "./workers-schema.js";
import { IMAGES_CONFIG } from "./images-schema.js";

/** Endpoint ids appear in URLs and real clients check job ids with the same pattern. */
export const ID_PATTERN = /^[A-Za-z0-9_-]+$/;

/** A configured endpoint's settings of the engine; the services' parts add theirs (`endpointFields`). */
const ENDPOINT_FIELDS = {
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
};

/** A configured endpoint: the engine's settings, and the fields the services' parts add (`extra`). */
function endpointConfigSchema(extra: z.ZodRawShape) {
  return z
    .strictObject({ ...ENDPOINT_FIELDS, ...extra })
    .refine((e) => e.workersMin <= e.workersMax, { message: "workersMin must not exceed workersMax", path: ["workersMin"] })
    .refine((e) => e.type === "LOAD_BALANCER" || e.requestCount === undefined, { message: "requestCount is for LOAD_BALANCER endpoints; queue endpoints scale on their queue", path: ["requestCount"] })
    .refine((e) => e.type !== "LOAD_BALANCER" || e.handler !== "scripted", {
      message: 'the scripted handler answers queue jobs; a LOAD_BALANCER endpoint takes "external" (worker processes), a worker\'s URL, "openai", "echo" or a function (a fetch handler)',
      path: ["handler"],
    });
}

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

/**
 * The config of an emulator built with `services`: the engine's keys, and each service's part
 * (`ServiceDef.config`, from its folder's `config.ts`); their REST collections are the operations
 * fault rules may name, and ids no endpoint may take. The wiring builds it for the services it
 * builds (compose/config.ts), the list of `services/index.ts` by default.
 */
export function configSchema<const L extends readonly ConfiguredService[]>(services: L): ConfigSchemaOf<L> {
  const parts = services.flatMap((s) => (s.config ? [s.config] : []));
  const collections = [...services.flatMap((s) => s.collections.v1 ?? []), ...services.flatMap((s) => s.collections.v2 ?? [])];
  const reserved = services.flatMap((s) => s.collections.v2 ?? []);
  const fields: z.ZodRawShape = Object.assign({}, ...parts.map((p) => p.fields));
  const endpointFields: z.ZodRawShape = Object.assign({}, ...parts.map((p) => p.endpointFields ?? {}));
  const schema = z
    .strictObject({
      ...engineHead(),
      endpoints: z.array(endpointConfigSchema(endpointFields)).default([]).describe("Queue-based endpoints served at /v2/{id}"),
      ...fields,
      ...engineTail(faultRuleSchema(faultOperations(collections))),
    })
    .superRefine((config, ctx) => {
      const seen = new Set<string>();
      config.endpoints.forEach((e, i) => {
        if (seen.has(e.id)) ctx.addIssue({ code: "custom", message: `duplicate endpoint id "${e.id}"`, path: ["endpoints", i, "id"] });
        if (reserved.includes(e.id)) {
          ctx.addIssue({ code: "custom", message: `endpoint id "${e.id}" is reserved: /v2/${e.id} is a resource of the REST surface; choose another id`, path: ["endpoints", i, "id"] });
        }
        seen.add(e.id);
      });
      for (const part of parts) part.check?.(config as never, ctx);
    });
  return schema.transform((config) => ({
    ...config,
    // Every configured endpoint gets its handler: its own, else the one a part gives it (its template's), else the default.
    endpoints: config.endpoints.map((e) => ({
      ...e,
      handler: e.handler ?? parts.reduce<string | undefined>((found, p) => found ?? p.endpointHandler?.(config as never, e as never), undefined) ?? DEFAULT_HANDLER,
    })),
  })) as unknown as ConfigSchemaOf<L>;
}

/** The engine's keys before the endpoints. */
function engineHead() {
  return {
    $schema: z.string().optional(),
    logLevel: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
    clock: ClockConfigSchema.default({ speed: 1 }),
  };
}

/** The engine's keys after the services' parts: fault rules (their operations those of the services built), observability, security, workers, auth, limits. */
function engineTail(FaultRuleSchema: FaultRuleSchema) {
  const { seed, ...observed } = OBSERVE_CONFIG;
  return {
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
  };
}

type Shape<L extends readonly ConfiguredService[]> = ReturnType<typeof engineHead> & {
  endpoints: z.ZodDefault<z.ZodArray<z.ZodObject<typeof ENDPOINT_FIELDS & EndpointFieldsOf<L>, z.core.$strict>>>;
} & FieldsOf<L> &
  ReturnType<typeof engineTail>;
type Parsed<L extends readonly ConfiguredService[]> = z.output<z.ZodObject<Shape<L>, z.core.$strict>>;
type CollectionOf<L extends readonly ConfiguredService[]> =
  L[number] extends infer S
    ? S extends { collections: infer C }
      ? (C extends { v1: readonly (infer A extends string)[] } ? A : never) | (C extends { v2: readonly (infer B extends string)[] } ? B : never)
      : never
    : never;
/** A name a fault rule's `operation` may take with the services `L`: the engine's operations and their REST collections. */
export type FaultOperationOf<L extends readonly ConfiguredService[]> = EngineOperation | CollectionOf<L>;

/** The config with the parts of the services `L`, as parsed: every configured endpoint has its handler. */
export type ConfigOf<L extends readonly ConfiguredService[]> = Omit<Parsed<L>, "endpoints"> & {
  endpoints: Parsed<L> extends { endpoints: Array<infer E> } ? Array<E & { handler: string }> : never;
};
/** The config with the parts of the services `L`, as a file or createEmulator gives it (defaults left out). */
export type ConfigInputOf<L extends readonly ConfiguredService[]> = Omit<z.input<z.ZodObject<Shape<L>, z.core.$strict>>, "faults"> & {
  faults?: Array<FaultRuleInputOf<FaultOperationOf<L>>> | undefined;
};
/** The config's schema with the parts of the services `L`. */
export type ConfigSchemaOf<L extends readonly ConfiguredService[]> = z.ZodType<ConfigOf<L>, ConfigInputOf<L>>;
