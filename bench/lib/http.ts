import { Agent, request } from "node:http";
import { AUTH } from "./processes.js";

/** One keep-alive agent for the driver loops (bounded sockets on loopback). */
export const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export interface Answer {
  status: number;
  body: any;
}

/** A JSON request over node:http (lighter than fetch for tight driver loops). */
export function call(base: string, method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { ...AUTH };
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = Buffer.byteLength(payload);
    }
    const req = request(`${base}${path}`, { method, headers, agent, timeout: timeoutMs }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8");
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

/** Polls `/health` of an endpoint until `done(health)` or `timeoutMs` passes. */
export async function waitForHealth(base: string, endpoint: string, done: (h: any) => boolean, timeoutMs = 120_000): Promise<any> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const h = await call(base, "GET", `/v2/${endpoint}/health`);
    if (h.status !== 200) throw new Error(`/v2/${endpoint}/health answered ${h.status}: ${JSON.stringify(h.body)}`);
    if (done(h.body)) return h.body;
    if (performance.now() > deadline) throw new Error(`gave up waiting on /v2/${endpoint}/health after ${timeoutMs} ms: ${JSON.stringify(h.body)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
