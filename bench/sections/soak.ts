import { benchConfig, ECHO } from "../lib/config.js";
import { call, type Answer } from "../lib/http.js";
import { CONNECTIONS } from "../lib/load.js";
import { rssSampler, startMinipod } from "../lib/processes.js";

export interface SoakResult {
  seconds: number;
  speed: number;
  requests: number;
  byOp: Record<string, number>;
  errors: number;
  errorSamples: string[];
  /** [wall seconds since start, RSS bytes] every half second. */
  rss: Array<[number, number]>;
  warmupSeconds: number;
  baselineRss: number;
  endRss: number;
  growth: number;
  jobsAtEnd: unknown;
}

const RETENTION_RUN_MS = 30 * 60 * 1000;
const MAX_REQUESTS = 5_000_000;
const WORK = { id: "work", handler: "scripted", workersMin: 0, workersMax: 2, coldStartMs: 0, idleTimeout: 5 };
/** No workers: its jobs wait until a purge removes them (only purges touch this endpoint). */
const HELD = { id: "held", handler: "echo", workersMin: 0, workersMax: 0 };

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/**
 * `seconds` of mixed load (run, status, runsync, cancel, retry, health, purge) from 16 lanes on the
 * real clock sped up so that the 30-minute result retention lasts a third of the soak: old jobs are
 * swept while the load goes on. RSS growth compares the mean of the samples just after warm-up
 * (half the soak) with the mean of the last tenth. Every answer must have the expected status.
 */
export async function soak(seconds: number, log: (line: string) => void): Promise<SoakResult> {
  const speed = RETENTION_RUN_MS / ((seconds / 3) * 1000);
  const server = await startMinipod({ config: await benchConfig([ECHO, WORK, HELD]), speed });
  const byOp: Record<string, number> = {};
  const errorSamples: string[] = [];
  let errors = 0;
  let requests = 0;
  const sampler = rssSampler(server.child.pid!);
  const rss = sampler.samples;
  const deadline = performance.now() + seconds * 1000;
  const expect = (op: string, a: Answer, ok: (status: number) => boolean) => {
    byOp[op] = (byOp[op] ?? 0) + 1;
    if (!ok(a.status)) {
      errors++;
      if (errorSamples.length < 5) errorSamples.push(`${op}: ${a.status} ${JSON.stringify(a.body).slice(0, 200)}`);
    }
    return a;
  };
  const is200 = (s: number) => s === 200;
  const u = server.url;
  const lane = async (lane: number) => {
    for (let i = 0; performance.now() < deadline && requests < MAX_REQUESTS; i++) {
      requests += 2;
      const run = expect("run", await call(u, "POST", "/v2/echo/run", { input: { lane, i, text: "x".repeat(200) } }), is200);
      expect("status", await call(u, "GET", `/v2/echo/status/${run.body?.id}`), is200);
      if (i % 5 === 0) {
        requests += 2;
        const slow = expect("run", await call(u, "POST", "/v2/work/run", { input: { sleepMs: 60_000 } }), is200);
        expect("cancel", await call(u, "POST", `/v2/work/cancel/${slow.body?.id}`, {}), is200);
      }
      if (i % 7 === 0) {
        requests += 1;
        expect("runsync", await call(u, "POST", "/v2/echo/runsync?wait=5000", { input: { lane, i } }), is200);
      }
      if (i % 11 === 0) {
        requests += 2;
        const bad = expect("run", await call(u, "POST", "/v2/work/run", { input: { fail: "planned failure" } }), is200);
        const st = expect("status", await call(u, "GET", `/v2/work/status/${bad.body?.id}`), is200);
        if (st.body?.status === "FAILED") {
          requests += 1;
          expect("retry", await call(u, "POST", `/v2/work/retry/${bad.body?.id}`, {}), is200);
        }
      }
      if (i % 50 === 0) {
        requests += 1;
        expect("health", await call(u, "GET", "/v2/echo/health"), is200);
      }
      if (i % 3 === 0) {
        requests += 1;
        expect("run", await call(u, "POST", "/v2/held/run", { input: { lane, i } }), is200);
      }
      if (i % 200 === lane % 200) {
        requests += 1;
        expect("purge", await call(u, "POST", "/v2/held/purge-queue", {}), is200);
      }
    }
  };
  try {
    log(`soak: ${seconds} s of mixed load at clock speed ${speed.toFixed(0)}`);
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => lane(i)));
    const jobsAtEnd = (await call(u, "GET", "/v2/echo/health")).body;
    const warmupSeconds = seconds / 2;
    const after = rss.filter(([t]) => t >= warmupSeconds);
    const head = after.slice(0, Math.max(1, Math.ceil(after.length / 10))).map(([, r]) => r);
    const tail = after.slice(-Math.max(1, Math.ceil(after.length / 10))).map(([, r]) => r);
    const baselineRss = mean(head);
    const endRss = mean(tail);
    return { seconds, speed, requests, byOp, errors, errorSamples, rss, warmupSeconds, baselineRss, endRss, growth: (endRss - baselineRss) / baselineRss, jobsAtEnd };
  } finally {
    sampler.stop();
    await server.stop();
  }
}
