import { createServer } from "node:net";
import { LB_HEALTH_PATH_DEFAULT } from "../domain/limits.js";
import { serviceUrls } from "./worker-process.js";

/** What a worker process of a load-balancing endpoint is told, as the platform tells its workers. */
export interface LbWorkerEnvOptions {
  /** minipod's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  endpoint: string;
  workerId: string;
  /** The API key the worker is given (bare, as the platform gives it). */
  key: string;
  /** The free port its server listens on (its health check too). */
  port: number;
  healthPath: string;
}

/**
 * The environment of a load-balancing worker: `PORT` for its server, `PORT_HEALTH` and
 * `HEALTH_CHECK_PATH` for its health check, and the platform's `RUNPOD_*` variables (the worker's
 * id, its endpoint, the API key; the service's URLs, `serviceUrls`, point the service's clients
 * at minipod, for workers that call other endpoints).
 */
export function lbWorkerEnv(o: LbWorkerEnvOptions): Record<string, string> {
  return {
    PORT: String(o.port),
    PORT_HEALTH: String(o.port),
    HEALTH_CHECK_PATH: o.healthPath,
    RUNPOD_POD_ID: o.workerId,
    RUNPOD_POD_HOSTNAME: `${o.workerId}-minipod`,
    RUNPOD_ENDPOINT_ID: o.endpoint,
    RUNPOD_AI_API_KEY: o.key,
    ...serviceUrls(o.url),
  };
}

/** The health path a worker declares in its environment, else /ping. */
export const healthPathOf = (env: Record<string, string | undefined> | undefined): string => {
  const path = env?.HEALTH_CHECK_PATH;
  return path && path.startsWith("/") ? path : LB_HEALTH_PATH_DEFAULT;
};

/** A port free on 127.0.0.1 now (the worker binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
