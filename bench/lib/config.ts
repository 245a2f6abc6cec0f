import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./processes.js";

/** An echo endpoint with warm workers and no cold start: the endpoint every load test drives. */
export const ECHO = { id: "echo", handler: "echo", workersMin: 3, workersMax: 3, coldStartMs: 0, idleTimeout: 3600 };

let schema: { safeParse(v: unknown): { success: boolean } } | undefined;

/** Whether this build's config schema accepts `partial` (features differ between builds). */
export async function supportsConfig(partial: object): Promise<boolean> {
  if (!schema) {
    // A build has its config schema as compose/config.js reads it (configFor), or, before, as config/schema.js exported it.
    const url = (file: string) => pathToFileURL(join(ROOT, file)).href;
    const composed = (await import(url("dist/compose/config.js")).catch(() => undefined)) as { configFor?: () => { schema: NonNullable<typeof schema> } } | undefined;
    schema = composed?.configFor ? composed.configFor().schema : ((await import(url("dist/config/schema.js"))) as { ConfigSchema: NonNullable<typeof schema> }).ConfigSchema;
  }
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
