import { z } from "zod";
import type { ExternalWorkerSettings } from "../domain/external-workers.js";
import {
  WORKER_LOST_AFTER_PINGS,
  WORKER_PING_INTERVAL_DEFAULT_MS,
  WORKER_PING_INTERVAL_MIN_MS,
  WORKER_POLL_HOLD_DEFAULT_MS,
  WORKER_POLL_HOLD_MAX_MS,
} from "../domain/limits.js";

const DEFAULTS = { pingIntervalMs: WORKER_PING_INTERVAL_DEFAULT_MS, pollHoldMs: WORKER_POLL_HOLD_DEFAULT_MS };

/** Worker processes of "external" endpoints (`externalWorkers`); all wall-clock ms. */
export const WORKERS_CONFIG = {
  externalWorkers: z
    .strictObject({
      pingIntervalMs: z
        .int()
        .min(WORKER_PING_INTERVAL_MIN_MS)
        .default(WORKER_PING_INTERVAL_DEFAULT_MS)
        .describe("Heartbeat period `minipod worker` gives its workers (RUNPOD_PING_INTERVAL); the service's is 10000"),
      lostAfterMs: z
        .int()
        .min(WORKER_PING_INTERVAL_MIN_MS)
        .optional()
        .describe(`A worker that sends nothing (heartbeat, poll, result) for this long is lost and its jobs go back to the queue; default ${WORKER_LOST_AFTER_PINGS} × pingIntervalMs`),
      pollHoldMs: z
        .int()
        .min(0)
        .max(WORKER_POLL_HOLD_MAX_MS)
        .default(WORKER_POLL_HOLD_DEFAULT_MS)
        .describe("How long an empty job-take or job-stop poll is held open before it answers 204"),
    })
    .default(DEFAULTS)
    .describe("Worker processes of endpoints whose handler is \"external\" (wall-clock ms)"),
} as const;

/** The settings the worker side runs with, defaults resolved. */
export const workerSettings = (c: { pingIntervalMs: number; lostAfterMs?: number | undefined; pollHoldMs: number }): ExternalWorkerSettings => ({
  pingIntervalMs: c.pingIntervalMs,
  lostAfterMs: c.lostAfterMs ?? WORKER_LOST_AFTER_PINGS * c.pingIntervalMs,
  pollHoldMs: c.pollHoldMs,
});
