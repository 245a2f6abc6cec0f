import { request } from "node:http";
import { benchConfig } from "../lib/config.js";
import { agent, call } from "../lib/http.js";
import { rssSampler, startMinipod } from "../lib/processes.js";

export interface MemorySoakResult {
  seconds: number;
  requests: number;
  bytesSent: number;
  byOp: Record<string, number>;
  errors: number;
  errorSamples: string[];
  /** [wall seconds since start, RSS bytes] every half second. */
  rss: Array<[number, number]>;
  /** Mean RSS of each fifth of the run after warm-up (the first fifth). */
  fifths: number[];
  peakRss: number;
  growth: number;
}

const RETENTION_RUN_MS = 30 * 60 * 1000;
const MAX_REQUESTS = 2_000_000;
const IMAGE = "A".repeat(1024 * 1024);
const BIG_404 = JSON.stringify({ input: { image: "B".repeat(4 * 1024 * 1024) } });
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** POSTs a prepared body with a key of its own (each request another API key, as open auth allows). */
function post(base: string, path: string, body: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: "POST", agent, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * `seconds` of the load that used to grow minipod without bound, on the real clock sped up so that
 * the 30-minute result retention lasts a fifth of the run: /run with 1 MB inputs, /runsync of
 * them, 4 MB bodies answered 404, a new API key on every request (open auth), a new worker id
 * pinging an external endpoint every few requests, and /status and /health reads. RSS is sampled
 * every half second; growth compares the second fifth of the run with the last.
 */
export async function memorySoak(seconds: number, log: (line: string) => void): Promise<MemorySoakResult> {
  const speed = RETENTION_RUN_MS / ((seconds / 5) * 1000);
  const config = await benchConfig([
    { id: "img", handler: "echo", workersMin: 2, workersMax: 2, coldStartMs: 0, idleTimeout: 3600 },
    { id: "ext", handler: "external" },
  ]);
  // Open auth: any key is accepted (each with quota counters); rate limits on, so they count.
  const server = await startMinipod({ config: { ...config, rateLimits: { enabled: true } }, speed });
  const byOp: Record<string, number> = {};
  const errorSamples: string[] = [];
  let errors = 0;
  let requests = 0;
  let bytesSent = 0;
  const sampler = rssSampler(server.child.pid!);
  const rss = sampler.samples;
  const deadline = performance.now() + seconds * 1000;
  const count = (op: string, status: number, ok: (s: number) => boolean) => {
    byOp[op] = (byOp[op] ?? 0) + 1;
    requests++;
    if (!ok(status)) {
      errors++;
      if (errorSamples.length < 5) errorSamples.push(`${op}: ${status}`);
    }
  };
  const u = server.url;
  const lane = async (lane: number) => {
    for (let i = 0; performance.now() < deadline && requests < MAX_REQUESTS; i++) {
      const key = `key-${lane}-${i}`;
      const body = JSON.stringify({ input: { lane, i, image: IMAGE } });
      bytesSent += body.length;
      count("run 1 MB", await post(u, "/v2/img/run", body, key), (s) => s === 200);
      if (i % 4 === 0) {
        bytesSent += body.length;
        count("runsync 1 MB", await post(u, "/v2/img/runsync", body, key), (s) => s === 200);
      }
      if (i % 3 === 0) {
        bytesSent += BIG_404.length;
        count("404 of 4 MB", await post(u, "/v2/nowhere/run", BIG_404, key), (s) => s === 404);
      }
      const ping = await call(u, "GET", `/v2/ext/ping/worker-${lane}-${i}`);
      count("ping, new worker id", ping.status, (s) => s === 200 || s === 429);
      if (i % 10 === 0) count("health", (await call(u, "GET", "/v2/img/health")).status, (s) => s === 200);
      if (i % 10 === 5) count("workers", (await call(u, "GET", "/_emulator/workers")).status, (s) => s === 200);
    }
  };
  try {
    log(`memory soak: ${seconds} s, clock speed ${speed.toFixed(0)}`);
    await Promise.all(Array.from({ length: 4 }, (_, i) => lane(i)));
    const fifth = seconds / 5;
    const fifths = Array.from({ length: 5 }, (_, k) => mean(rss.filter(([t]) => t >= k * fifth && t < (k + 1) * fifth).map(([, r]) => r)));
    const peakRss = Math.max(...rss.map(([, r]) => r));
    return { seconds, requests, bytesSent, byOp, errors, errorSamples, rss, fifths, peakRss, growth: (fifths[4]! - fifths[1]!) / fifths[1]! };
  } finally {
    sampler.stop();
    await server.stop();
  }
}

/** The result as markdown, for bench/RESULTS-memory.md. */
export function renderMemorySoak(r: MemorySoakResult, header: string): string {
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
  const lines = [
    "# minipod memory soak",
    "",
    "Written by `npm run bench -- --only memory` (bench/sections/memory-soak.ts). Do not edit by hand.",
    "",
    header,
    "",
    `${r.seconds} s of load from 4 lanes on 127.0.0.1: ${r.requests.toLocaleString("en-US")} requests, ${(r.bytesSent / 1024 / 1024 / 1024).toFixed(1)} GB of request bodies, ${r.errors} unexpected answers.`,
    "",
    "| operation | requests |",
    "|---|---:|",
    ...Object.entries(r.byOp).map(([op, n]) => `| ${op} | ${n.toLocaleString("en-US")} |`),
    "",
    "RSS, mean of each fifth of the run (result retention, 30 virtual minutes, lasts one fifth):",
    "",
    `| ${r.fifths.map((_, k) => `fifth ${k + 1}`).join(" | ")} | peak | growth, 2nd fifth → 5th |`,
    `|${r.fifths.map(() => "---:").join("|")}|---:|---:|`,
    `| ${r.fifths.map(mb).join(" | ")} | ${mb(r.peakRss)} | ${(r.growth * 100).toFixed(1)} % |`,
    "",
    ...(r.errorSamples.length ? ["Unexpected answers (first 5):", "", ...r.errorSamples.map((s) => `- ${s}`), ""] : []),
  ];
  return lines.join("\n");
}
