import { rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig } from "../lib/config.js";
import { agent, call } from "../lib/http.js";
import { startMinipod } from "../lib/processes.js";
import { readProbe, type ProbeLine } from "./event-loop.js";

export interface MemorySoakResult {
  seconds: number;
  requests: number;
  bytesSent: number;
  byOp: Record<string, number>;
  errors: number;
  errorSamples: string[];
  /** What minipod's process reported every half second (lib/process-probe.mjs). */
  samples: ProbeLine[];
  /** Mean RSS of each fifth of the run (the first is warm-up: retention has not yet deleted a job). */
  fifths: number[];
  /** The same for the JavaScript heap in use, and for memory outside it (RSS − heap), by fifth. */
  heapFifths: number[];
  outsideFifths: number[];
  peakRss: number;
  /** Mean RSS of the last two fifths: the steady state. */
  steadyRss: number;
  growth: number;
  /** Node flags minipod ran with. */
  nodeArgs: string[];
}

const RETENTION_RUN_MS = 30 * 60 * 1000;
const MAX_REQUESTS = 2_000_000;
const IMAGE = "A".repeat(1024 * 1024);
const BIG_404 = JSON.stringify({ input: { image: "B".repeat(4 * 1024 * 1024) } });
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** POSTs a prepared body with a key of its own (each request another API key, as open auth allows). */
function post(base: string, path: string, body: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method: "POST", agent, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
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
export async function memorySoak(seconds: number, log: (line: string) => void, nodeArgs: string[] = []): Promise<MemorySoakResult> {
  const speed = RETENTION_RUN_MS / ((seconds / 5) * 1000);
  const config = await benchConfig([
    { id: "img", handler: "echo", workersMin: 2, workersMax: 2, coldStartMs: 0, idleTimeout: 3600 },
    { id: "ext", handler: "external" },
  ]);
  // Open auth: any key is accepted (each with quota counters); rate limits on, so they count.
  const probeFile = join(tmpdir(), `minipod-bench-probe-${process.pid}-memory.jsonl`);
  rmSync(probeFile, { force: true });
  const server = await startMinipod({ config: { ...config, rateLimits: { enabled: true } }, speed, probeFile, probeMs: 500, nodeArgs });
  const byOp: Record<string, number> = {};
  const errorSamples: string[] = [];
  let errors = 0;
  let requests = 0;
  let bytesSent = 0;
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
    log(`memory soak: ${seconds} s, clock speed ${speed.toFixed(0)}${nodeArgs.length ? `, node ${nodeArgs.join(" ")}` : ""}`);
    await Promise.all(Array.from({ length: 4 }, (_, i) => lane(i)));
    const samples = readProbe(probeFile);
    const t0 = samples[0]?.t ?? 0;
    const fifth = (seconds * 1000) / 5;
    const byFifth = (f: (l: ProbeLine) => number) => Array.from({ length: 5 }, (_, k) => mean(samples.filter((l) => l.t - t0 >= k * fifth && l.t - t0 < (k + 1) * fifth).map(f)));
    const fifths = byFifth((l) => l.rss);
    const peakRss = Math.max(...samples.map((l) => l.rss));
    return {
      seconds,
      requests,
      bytesSent,
      byOp,
      errors,
      errorSamples,
      samples,
      fifths,
      heapFifths: byFifth((l) => l.heapUsed),
      outsideFifths: byFifth((l) => l.rss - l.heapTotal),
      peakRss,
      steadyRss: (fifths[3]! + fifths[4]!) / 2,
      growth: (fifths[4]! - fifths[1]!) / fifths[1]!,
      nodeArgs,
    };
  } finally {
    await server.stop();
    rmSync(probeFile, { force: true });
  }
}

/** The results as markdown, for bench/RESULTS-memory.md: one section per run. */
export function renderMemorySoak(runs: MemorySoakResult[], header: string): string {
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
  const lines = [
    "# minipod memory soak",
    "",
    "Written by `npm run bench -- --only memory` (bench/sections/memory-soak.ts). Do not edit by hand.",
    "",
    header,
    "",
    "Load: /run with 1 MB inputs, /runsync of them, 4 MB bodies answered 404, a new API key on every request (open auth, rate limits on), a new worker id pinging an external endpoint, /health and /_emulator/workers reads; 4 lanes on 127.0.0.1. The clock runs fast so that result retention (30 virtual minutes) lasts one fifth of a run: from the second fifth on, jobs are deleted as fast as they come, and memory should level off.",
    "",
  ];
  for (const r of runs) {
    lines.push(
      `## ${r.nodeArgs.length ? `node ${r.nodeArgs.join(" ")}` : "node's default heap limit"}`,
      "",
      `${r.seconds} s: ${r.requests.toLocaleString("en-US")} requests, ${(r.bytesSent / 1024 / 1024 / 1024).toFixed(1)} GB of request bodies, ${r.errors} unexpected answers (${Object.entries(r.byOp)
        .map(([op, n]) => `${op} ${n.toLocaleString("en-US")}`)
        .join(", ")}).`,
      "",
      "RSS and its parts (`process.memoryUsage()` in minipod's process, every half second), mean of each fifth of the run:",
      "",
      `| | ${r.fifths.map((_, k) => `fifth ${k + 1}`).join(" | ")} | peak |`,
      `|---|${r.fifths.map(() => "---:").join("|")}|---:|`,
      `| RSS | ${r.fifths.map(mb).join(" | ")} | ${mb(r.peakRss)} |`,
      `| JavaScript heap in use | ${r.heapFifths.map(mb).join(" | ")} | |`,
      `| outside the heap (RSS − heap total: buffers, SQLite, code) | ${r.outsideFifths.map(mb).join(" | ")} | |`,
      "",
      `Steady state (mean RSS of the last two fifths): **${mb(r.steadyRss)}**; change from the 2nd fifth to the 5th: ${(r.growth * 100).toFixed(1)} %.`,
      "",
      ...(r.errorSamples.length ? ["Unexpected answers (first 5):", "", ...r.errorSamples.map((s) => `- ${s}`), ""] : []),
    );
  }
  return lines.join("\n");
}
