import autocannon from "autocannon";
import { AUTH } from "./processes.js";

/** The benchmark's connection count (issue: 16 connections on loopback). */
export const CONNECTIONS = 16;

export interface LoadResult {
  /** Mean requests per second over the measured run. */
  rps: number;
  /** 99th percentile latency, ms. */
  p99: number;
  p50: number;
  requests: number;
  /** Socket errors, timeouts and answers other than 2xx. */
  errors: number;
  seconds: number;
}

export interface LoadPlan {
  url: string;
  method: "GET" | "POST";
  path: string;
  body?: string;
  /** Rewrites each request's path (e.g. to cycle through job ids). */
  nextPath?: () => string;
  /** autocannon stops by itself after this many seconds. */
  seconds: number;
  /** Called right before and right after the measured run (not the warm-up): to read the server's CPU time. */
  around?: { before(): void; after(): void };
}

function once(plan: LoadPlan, seconds: number): Promise<autocannon.Result> {
  const headers: Record<string, string> = { ...AUTH };
  if (plan.body !== undefined) headers["content-type"] = "application/json";
  const request: autocannon.Request = { method: plan.method, path: plan.path, headers };
  if (plan.body !== undefined) request.body = plan.body;
  if (plan.nextPath) {
    const next = plan.nextPath;
    request.setupRequest = (req) => ({ ...req, path: next() });
  }
  return autocannon({
    url: plan.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [request],
    timeout: 10,
  });
}

/** A short warm-up run (JIT, pools), then the measured run with autocannon. */
export async function measure(plan: LoadPlan): Promise<LoadResult> {
  await once(plan, Math.min(2, Math.max(1, Math.round(plan.seconds / 5))));
  plan.around?.before();
  const r = await once(plan, plan.seconds);
  plan.around?.after();
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    p50: r.latency.p50,
    requests: r.requests.total,
    errors: r.errors + r.timeouts + r.non2xx,
    seconds: r.duration,
  };
}

/**
 * Sends exactly `amount` POSTs (16 connections), stopping early if `maxSeconds` pass first, and
 * reports how many got a 2xx.
 */
export function submitMany(url: string, path: string, body: string, amount: number, maxSeconds: number): Promise<{ ok: number; errors: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: CONNECTIONS,
        amount,
        requests: [{ method: "POST", path, body, headers: { ...AUTH, "content-type": "application/json" } }],
        timeout: 30,
      },
      (err, r) => {
        clearTimeout(guard);
        if (err) return reject(err);
        resolve({ ok: r["2xx"], errors: r.errors + r.timeouts + r.non2xx, seconds: r.duration });
      },
    );
    const guard = setTimeout(() => instance.stop(), maxSeconds * 1000);
  });
}
