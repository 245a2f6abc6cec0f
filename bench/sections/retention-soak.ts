import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server as HttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agent } from "../lib/http.js";
import { startMinipod } from "../lib/processes.js";
import { readProbe, type ProbeLine } from "./event-loop.js";

/**
 * The long soak: minipod at `--speed 10` (a result's 30 virtual minutes of retention last 3 real
 * minutes) under a steady mix of every kind of job, for as long as asked, so that jobs expire
 * all along; RSS should stay flat after the first retention period. API keys cycle through
 * 100,000 distinct ones (open auth, rate limits on).
 */
export interface RetentionSoakResult {
  seconds: number;
  speed: number;
  ratePerSecond: number;
  requests: number;
  byOp: Record<string, number>;
  statuses: Record<string, number>;
  keys: number;
  /** Mean RSS and heap in use (MB) of each period after the start, `periodSeconds` long. */
  periods: Array<{ from: number; rssMb: number; heapMb: number; peakRssMb: number }>;
  periodSeconds: number;
  /** RSS of the last period against the mean of the first period after retention began (the 2nd). */
  growth: number;
}

const SPEED = 10;
/** Result retention of `/run`: 30 virtual minutes. */
const RETENTION_WALL_S = (30 * 60) / SPEED;
const DISTINCT_KEYS = 100_000;
const PAD = "x".repeat(2048);

function send(base: string, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { authorization: `Bearer ${key}` };
    if (payload !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
    const req = request(`${base}${path}`, { method, headers, agent, timeout: 60_000 }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") }));
      res.on("error", () => resolve({ status: 0, text: "" }));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve({ status: 0, text: "" }));
    req.end(payload);
  });
}

const idOf = (text: string): string | undefined => {
  try {
    return (JSON.parse(text) as { id?: string }).id;
  } catch {
    return undefined;
  }
};

/** `seconds` of the mix at about `rate` loop turns a second (each 2 to 4 requests). */
export async function retentionSoak(seconds: number, rate: number, log: (line: string) => void): Promise<RetentionSoakResult> {
  const hooks: HttpServer = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", r));
  const hookUrl = `http://127.0.0.1:${(hooks.address() as { port: number }).port}/hook`;
  const probeFile = join(tmpdir(), `minipod-bench-probe-${process.pid}-retention.jsonl`);
  rmSync(probeFile, { force: true });
  const config = {
    logLevel: "warn",
    rateLimits: { enabled: true },
    endpoints: [
      { id: "echo", handler: "echo", workersMin: 3, workersMax: 3, coldStartMs: 0, idleTimeout: 3600 },
      { id: "script", handler: "scripted", workersMin: 3, workersMax: 3, coldStartMs: 0, idleTimeout: 3600 },
      { id: "llm", handler: "openai", workersMin: 2, workersMax: 2, coldStartMs: 0, idleTimeout: 3600 },
    ],
  };
  const server = await startMinipod({ config, speed: SPEED, probeFile, probeMs: 1000 });
  const byOp: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  let requests = 0;
  let turn = 0;
  const u = server.url;
  const count = (op: string, status: number) => {
    byOp[op] = (byOp[op] ?? 0) + 1;
    statuses[status] = (statuses[status] ?? 0) + 1;
    requests++;
  };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const one = async (i: number) => {
    const key = `soak-key-${i % DISTINCT_KEYS}`;
    const run = await send(u, "POST", "/v2/echo/run", key, { input: { i, pad: PAD } });
    count("run", run.status);
    const id = idOf(run.text);
    if (id) count("status", (await send(u, "GET", `/v2/echo/status/${id}`, key)).status);
    if (i % 4 === 0) count("runsync", (await send(u, "POST", "/v2/echo/runsync", key, { input: { i } })).status);
    if (i % 8 === 1) count("run with webhook", (await send(u, "POST", "/v2/echo/run", key, { input: { i }, webhook: hookUrl })).status);
    if (i % 8 === 2) {
      const s = await send(u, "POST", "/v2/script/run", key, { input: { stream: ["a", "b", "c"], streamIntervalMs: 100 } });
      count("run streaming", s.status);
      const sid = idOf(s.text);
      if (sid) count("stream", (await send(u, "GET", `/v2/script/stream/${sid}`, key)).status);
    }
    if (i % 16 === 3) {
      const s = await send(u, "POST", "/v2/script/run", key, { input: { sleepMs: 60_000 } });
      count("run long", s.status);
      const sid = idOf(s.text);
      if (sid) count("cancel", (await send(u, "POST", `/v2/script/cancel/${sid}`, key)).status);
    }
    if (i % 16 === 5) count("openai chat", (await send(u, "POST", "/v2/llm/openai/v1/chat/completions", key, { messages: [{ role: "user", content: `hello ${i}` }] })).status);
    if (i % 50 === 7) count("health", (await send(u, "GET", "/v2/echo/health", key)).status);
  };
  try {
    log(`retention soak: ${seconds} s at --speed ${SPEED} (retention ${RETENTION_WALL_S} s), about ${rate} turns/s`);
    // Paced: turn k starts at k / rate seconds, at most 32 in flight.
    const inFlight = new Set<Promise<void>>();
    while (performance.now() < deadline) {
      const due = started + (turn / rate) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (inFlight.size >= 32) await Promise.race(inFlight);
      const p = one(turn++).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    const samples = readProbe(probeFile);
    const t0 = samples[0]?.t ?? 0;
    const periodSeconds = RETENTION_WALL_S;
    const periods: RetentionSoakResult["periods"] = [];
    for (let from = 0; from < seconds; from += periodSeconds) {
      const inPeriod = samples.filter((l: ProbeLine) => l.t - t0 >= from * 1000 && l.t - t0 < (from + periodSeconds) * 1000);
      if (inPeriod.length === 0) continue;
      const mean = (f: (l: ProbeLine) => number) => inPeriod.reduce((a, l) => a + f(l), 0) / inPeriod.length / 1024 / 1024;
      periods.push({ from, rssMb: mean((l) => l.rss), heapMb: mean((l) => l.heapUsed), peakRssMb: Math.max(...inPeriod.map((l) => l.rss)) / 1024 / 1024 });
    }
    const base = periods[1]?.rssMb ?? periods[0]!.rssMb;
    const last = periods[periods.length - 1]!.rssMb;
    return { seconds, speed: SPEED, ratePerSecond: rate, requests, byOp, statuses, keys: Math.min(turn, DISTINCT_KEYS), periods, periodSeconds, growth: (last - base) / base };
  } finally {
    await server.stop();
    hooks.close();
    rmSync(probeFile, { force: true });
  }
}

const MARK_START = "<!-- retention soak -->";
const MARK_END = "<!-- /retention soak -->";

/** The result as a section of bench/RESULTS-memory.md, between markers (the rest of the file is the other soak's). */
export function renderRetentionSoak(r: RetentionSoakResult, header: string): string {
  const lines = [
    MARK_START,
    "## Retention soak: every kind of job, results expiring, 100,000 API keys",
    "",
    "Written by `npm run bench -- --only retention --retention-seconds N` (bench/sections/retention-soak.ts).",
    "",
    header,
    "",
    `Load: minipod at \`--speed ${r.speed}\` (a result's 30 minutes of retention last ${RETENTION_WALL_S} s), about ${r.ratePerSecond} turns a second for ${r.seconds} s: each turn a \`/run\` of 2 KB and its \`/status\`; every 4th a \`/runsync\`, every 8th a \`/run\` with a webhook (to a receiver on 127.0.0.1) and a streaming job read with \`/stream\`, every 16th a long job cancelled and an OpenAI chat completion; API keys cycle through ${r.keys.toLocaleString("en-US")} distinct ones (open auth, rate limits on).`,
    "",
    `${r.requests.toLocaleString("en-US")} requests (${Object.entries(r.byOp)
      .map(([op, n]) => `${op} ${n.toLocaleString("en-US")}`)
      .join(", ")}); statuses ${Object.entries(r.statuses)
      .map(([s, n]) => `${s}: ${n.toLocaleString("en-US")}`)
      .join(", ")}.`,
    "",
    `RSS and heap in use (\`process.memoryUsage()\` in minipod's process, every second), mean of each retention period (${r.periodSeconds} s):`,
    "",
    "| from (s) | RSS | peak RSS | JavaScript heap in use |",
    "|---:|---:|---:|---:|",
    ...r.periods.map((p) => `| ${p.from} | ${p.rssMb.toFixed(0)} MB | ${p.peakRssMb.toFixed(0)} MB | ${p.heapMb.toFixed(0)} MB |`),
    "",
    `Change of RSS from the first period after retention began (the 2nd) to the last: **${(r.growth * 100).toFixed(1)} %**.`,
    MARK_END,
  ];
  return lines.join("\n");
}

/** Puts the section into the file, in place of an earlier one. */
export function writeRetentionSection(file: string, section: string): void {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    /* a new file */
  }
  const a = text.indexOf(MARK_START);
  const b = text.indexOf(MARK_END);
  const rest = a >= 0 && b > a ? text.slice(0, a) + text.slice(b + MARK_END.length) : text;
  writeFileSync(file, `${rest.trimEnd()}\n\n${section}\n`);
}

/** The section kept from the file, for the other soak, which writes the file whole. */
export function retentionSection(file: string): string | undefined {
  try {
    const text = readFileSync(file, "utf8");
    const a = text.indexOf(MARK_START);
    const b = text.indexOf(MARK_END);
    return a >= 0 && b > a ? text.slice(a, b + MARK_END.length) : undefined;
  } catch {
    return undefined;
  }
}
