import { z } from "zod";
import { FAULT_RETRY_AFTER_MAX_S } from "../domain/bounds.js";
import { EmulatorError } from "../domain/errors.js";
import { EXECUTION_TIMEOUT_MAX_MS } from "../domain/limits.js";
import { unknownName } from "../domain/nearest.js";
import { LOAD_BALANCER_OPERATION, QUEUE_OPERATIONS, WORKER_OPERATIONS } from "../domain/operations.js";

/** The engine's operations a fault rule may name; the REST collections of the services built join them (`FaultOperation` of services/index.ts). */
export type EngineOperation = (typeof QUEUE_OPERATIONS)[number] | (typeof WORKER_OPERATIONS)[number] | typeof LOAD_BALANCER_OPERATION;

/**
 * Every name a fault rule's `operation` can match: the queue's operations, the worker routes',
 * a load-balancing endpoint's requests (`lb`) and the REST collections of the services built
 * (`/v1/{collection}`, `/v2/{collection}`), which the wiring passes in.
 */
export function faultOperations(collections: readonly string[]): [string, ...string[]] {
  return [...new Set([...QUEUE_OPERATIONS, ...WORKER_OPERATIONS, LOAD_BALANCER_OPERATION, ...collections])] as [string, ...string[]];
}

const ms = () => z.int().min(0);

const FAULT_TYPES = ["http", "latency", "reset", "worker-crash", "timeout", "no-workers"] as const;

/** One fault (see FaultRuleInput in src/domain/faults.ts). */
export const FaultSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("http"),
    status: z.int().min(400).max(599).describe("The status to answer with (problem+json)"),
    retryAfter: z.int().min(0).max(FAULT_RETRY_AFTER_MAX_S).optional().describe("Seconds, sent as Retry-After"),
    message: z.string().optional().describe("The problem's detail"),
  }),
  z.strictObject({ type: z.literal("latency"), ms: ms().max(600_000).describe("Wall-clock ms added before the answer") }),
  z.strictObject({ type: z.literal("reset").describe("The connection is dropped without an answer") }),
  z.strictObject({
    type: z.literal("worker-crash"),
    // A crash later than the longest execution timeout could never happen.
    atMs: ms().max(EXECUTION_TIMEOUT_MAX_MS).optional().describe("Virtual ms into the job when the worker dies; default: just before it reports its result"),
  }),
  z.strictObject({ type: z.literal("timeout").describe("The handler hangs until the job's execution timeout") }),
  z.strictObject({ type: z.literal("no-workers").describe("The endpoint has no capacity while the rule lives: jobs wait, workers throttled") }),
], {
  error: (issue) => {
    const type = (issue.input as { type?: unknown } | undefined)?.type;
    return typeof type === "string" ? unknownName("fault type", type, FAULT_TYPES) : `a fault needs a "type": one of ${FAULT_TYPES.join(", ")}`;
  },
});

/** A fault rule whose `operation` is one of `operations` (see `faultOperations`). */
export function faultRuleSchema(operations: readonly [string, ...string[]]) {
  return z.strictObject({
    endpoint: z.string().min(1).optional().describe("Only this endpoint"),
    operation: z
      .enum(operations, { error: (issue) => unknownName("operation", String(issue.input), operations) })
      .optional()
      .describe(
        "Only this operation: run, runsync, status, status-sync, stream, cancel, retry, purge-queue, health, requests, openai, batch (the batch routes), a worker route (job-take, ping, ...) or a REST collection (endpoints, network-volumes, ...)",
      ),
    fault: FaultSchema,
    times: z.int().min(1).optional().describe("Fires for this many matches, then is spent"),
    probability: z.number().min(0).max(1).optional().describe("Chance that a match fires (seeded PRNG)"),
    after: z.int().min(0).optional().describe("Matches let through before the rule starts firing"),
  });
}

export type FaultRuleSchema = ReturnType<typeof faultRuleSchema>;
export type FaultRuleConfig = z.infer<FaultRuleSchema>;
/** A fault rule as `faults.add` takes it: its operation one of `O` (the operations of the services built), checked by the type too. */
export type FaultRuleInputOf<O extends string> = Omit<z.input<FaultRuleSchema>, "operation"> & { operation?: O | undefined };

/** A rule given to `emulator.faults.add`, checked as the config and the control API check it. */
export function parseFaultRule(schema: FaultRuleSchema, rule: unknown): FaultRuleConfig {
  const result = schema.safeParse(rule);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join(".") || "(rule)"}: ${i.message}`);
  throw new EmulatorError("VALIDATION_FAILED", `invalid fault rule: ${issues.join("; ")}`, { errors: issues });
}
