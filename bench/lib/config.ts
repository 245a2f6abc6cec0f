import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./processes.js";

/** An echo endpoint with warm workers and no cold start: the endpoint every load test drives. */
export const ECHO = { id: "echo", handler: "echo", workersMin: 3, workersMax: 3, coldStartMs: 0, idleTimeout: 3600 };

let schema: { safeParse(v: unknown): { success: boolean } } | undefined;

/** Whether this build's config schema accepts `partial` (features differ between builds). */
export async function supportsConfig(partial: object): Promise<boolean> {
  schema ??= ((await import(pathToFileURL(join(ROOT, "dist/config/schema.js")).href)) as { ConfigSchema: NonNullable<typeof schema> }).ConfigSchema;
  return schema.safeParse(partial).success;
}

/**
 * Whether this build's config schema has `rateLimits` (the rate-limit feature); when it does, the
 * benchmark turns the limits off, since it measures the emulator and not the 429 path.
 */
export function supportsRateLimitSwitch(): Promise<boolean> {
  return supportsConfig({ rateLimits: { enabled: false } });
}

/** A minipod config with these endpoints and, where the build has them, rate limits off. */
export async function benchConfig(endpoints: object[]): Promise<object> {
  return { logLevel: "warn", endpoints, ...((await supportsRateLimitSwitch()) ? { rateLimits: { enabled: false } } : {}) };
}
