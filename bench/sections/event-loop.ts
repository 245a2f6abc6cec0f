import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig } from "../lib/config.js";
import { call } from "../lib/http.js";
import { API_KEY, startMinipod } from "../lib/processes.js";

const MB = 1024 * 1024;
/** Lines of lib/process-probe.mjs: memory and the longest event-loop delay since the line before. */
export interface ProbeLine {
  t: number;
  wall: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  loopMaxMs: number;
}

export const readProbe = (file: string): ProbeLine[] => {
  try {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ProbeLine);
  } catch {
    return [];
  }
};

export interface LoopCase {
  name: string;
  /** Request body bytes sent. */
  bytes: number;
  status: number;
  /** Wall ms from the first byte sent to the last byte of the answer read. */
  wallMs: number;
  /** The longest the server's event loop was blocked while the request was in flight (ms), the worst of the rounds. */
  blockMs: number;
  /** The same, the median of the rounds. */
  medianBlockMs: number;
  /**
   * What `JSON.parse` of the same body takes in the bench's own process right after each round
   * (the median): the floor of any server that parses the body on its event loop, and a yardstick
   * of how fast the machine was at the time (a shared machine's figures vary many times over).
   */
  parseMs: number;
}

export interface EventLoopResult {
  rounds: number;
  idleBlockMs: number;
  cases: LoopCase[];
}

/** A JSON body of exactly `bytes` bytes: `{"input":{"image":"AAAA…"}}`, a base64 image as image workers get. */
function stringBody(bytes: number): Buffer {
  const shell = '{"input":{"image":""}}';
  return Buffer.from(`{"input":{"image":"${"A".repeat(bytes - shell.length)}"}}`);
}

/** A JSON body of about `bytes` bytes of small values: `{"input":{"v":[1,1,…]}}`, the most work per byte to parse. */
function numbersBody(bytes: number): Buffer {
  const shell = '{"input":{"v":[]}}';
  const n = Math.floor((bytes - shell.length + 1) / 2);
  return Buffer.from(`{"input":{"v":[${"1,".repeat(n - 1)}1]}}`);
}

/** POSTs `body` as it is (a prepared Buffer: the client does no work while it is sent); drains the answer. */
function post(base: string, path: string, body: Buffer, chunked = false): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers: Record<string, string | number> = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };
    if (!chunked) headers["content-length"] = body.length;
    const req = request(`${base}${path}`, { method: "POST", headers, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      res.on("error", reject);
    });
    // A refused body: the server answers 413 and closes before all of it is read.
    req.on("error", (e) => reject(e));
    if (chunked) {
      for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
      req.end();
    } else req.end(body);
  });
}

/** GETs `path`, draining the answer. */
function get(base: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers: { authorization: `Bearer ${API_KEY}` }, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * A worker process's round with a result of the maximum size, as the service's worker runtime
 * makes it: a small job submitted, taken, its 20 MB result posted with job-done, then read
 * whole on `/status`.
 */
async function workerResult(base: string, result: Buffer): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const { id } = (await call(base, "POST", "/v2/wrk/run", { input: { prompt: "draw" } })).body as { id: string };
  const taken = await call(base, "GET", "/v2/wrk/job-take/bench-worker?gpu=x&job_in_progress=0");
  if (taken.status !== 200) throw new Error(`job-take answered ${taken.status}`);
  const done = await post(base, `/v2/wrk/job-done/bench-worker/${id}?gpu=x&isStream=false`, result);
  if (done.status !== 200) return { status: done.status, ms: performance.now() - started };
  const status = await get(base, `/v2/wrk/status/${id}`);
  return { status, ms: performance.now() - started };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * How long one request of the service's maximum size blocks minipod's event loop, over a real
 * socket on 127.0.0.1: the server runs with lib/process-probe.mjs, whose event-loop delay monitor
 * (5 ms resolution) reports the longest block every 50 ms; a case's figure is the longest block
 * reported while its request was in flight (and 200 ms after, for work the answer left behind).
 * Requests go one at a time with idle gaps, so each block is that request's alone. The figure is
 * the worst of `rounds`, and the median.
 */
export async function eventLoop(rounds: number, log: (line: string) => void): Promise<EventLoopResult> {
  const dir = mkdtempSync(join(tmpdir(), "minipod-bench-loop-"));
  try {
    const memory = await eventLoopOf(rounds, log, undefined);
    // With a database file: SQLite writes large payloads slower to a file than to memory.
    const file = await eventLoopOf(rounds, log, join(dir, "state.db"));
    return { rounds, idleBlockMs: Math.max(memory.idleBlockMs, file.idleBlockMs), cases: [...memory.cases, ...file.cases] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function eventLoopOf(rounds: number, log: (line: string) => void, db: string | undefined): Promise<EventLoopResult> {
  const probeFile = join(tmpdir(), `minipod-bench-probe-${process.pid}-loop.jsonl`);
  rmSync(probeFile, { force: true });
  // "img": the echo handler in minipod's process, whose own parse of its input is in the block;
  // "ext": an endpoint of worker processes (none polling), where the block is minipod's work alone.
  const config = await benchConfig([
    { id: "img", handler: "echo", workersMin: 1, workersMax: 1, coldStartMs: 0, idleTimeout: 3600 },
    { id: "ext", handler: "external" },
    // A queue of its own: "ext" keeps the jobs of the cases before it.
    { id: "wrk", handler: "external" },
  ]);
  const server = await startMinipod({ config, probeFile, probeMs: 50, db });
  const result = Buffer.from(`{"output":${stringBody(20 * MB - 64).toString("utf8").slice('{"input":'.length, -1)}}`);
  const cases: Array<{ name: string; path: string; body: Buffer; chunked?: boolean; exec?: (base: string) => Promise<{ status: number; ms: number }> }> = [
    { name: "/run, 10 MB, one string, to worker processes (accepted)", path: "/v2/ext/run", body: stringBody(10 * MB) },
    { name: "/run, 10 MB of small numbers, to worker processes (accepted)", path: "/v2/ext/run", body: numbersBody(10 * MB) },
    { name: "a worker process's 20 MB result: job-take, job-done, then /status (20 MB answer)", path: "/v2/wrk/job-done", body: result, exec: (base) => workerResult(base, result) },
    { name: "/run, 10 MB, one string, echo handler in process (accepted)", path: "/v2/img/run", body: stringBody(10 * MB) },
    { name: "/runsync, 20 MB, one string (accepted, 20 MB answer)", path: "/v2/img/runsync", body: stringBody(20 * MB) },
    { name: "/run, 10 MB + 1 byte, Content-Length (refused 413)", path: "/v2/img/run", body: stringBody(10 * MB + 1) },
    { name: "/run, 10 MB + 1 byte, chunked (refused 413 while reading)", path: "/v2/img/run", body: stringBody(10 * MB + 1), chunked: true },
    { name: "/run, 10 MB of small numbers, echo handler in process (accepted)", path: "/v2/img/run", body: numbersBody(10 * MB) },
    { name: "/runsync, 20 MB of small numbers (accepted, 20 MB answer)", path: "/v2/img/runsync", body: numbersBody(20 * MB) },
  ];
  // With a file, the accepted ones only (a refusal writes nothing).
  if (db) cases.splice(0, cases.length, ...cases.filter((c) => !c.name.includes("refused")));
  // BENCH_LOOP_ONLY=text: only the cases whose name contains it (while looking into one).
  const only = process.env.BENCH_LOOP_ONLY;
  if (only) cases.splice(0, cases.length, ...cases.filter((c) => c.name.includes(only)));
  const out: LoopCase[] = [];
  try {
    await sleep(1000);
    const idleFrom = Date.now();
    await sleep(1000);
    const idleBlockMs = Math.max(0, ...readProbe(probeFile).filter((l) => l.wall >= idleFrom).map((l) => l.loopMaxMs));
    for (const c of cases) {
      const name = db ? `${c.name}, --db file` : c.name;
      const blocks: number[] = [];
      const parses: number[] = [];
      let status = 0;
      let wall = 0;
      for (let r = 0; r < rounds; r++) {
        await sleep(400);
        const from = Date.now();
        let answer: { status: number; ms: number };
        try {
          answer = c.exec ? await c.exec(server.url) : await post(server.url, c.path, c.body, c.chunked);
        } catch (e) {
          // The server may close a refused upload before the client has written it all.
          answer = { status: 413, ms: Date.now() - from };
          log(`event loop: ${name}: ${(e as Error).message}`);
        }
        await sleep(300);
        const to = Date.now() - 100;
        // A line reports the 50 ms before it: the lines from the request's start to 200 ms after its end.
        blocks.push(Math.max(0, ...readProbe(probeFile).filter((l) => l.wall > from && l.wall <= to).map((l) => l.loopMaxMs)));
        const text = c.body.toString("utf8");
        const p0 = performance.now();
        JSON.parse(text);
        parses.push(performance.now() - p0);
        status = answer.status;
        wall = Math.max(wall, answer.ms);
      }
      out.push({ name, bytes: c.body.length, status, wallMs: wall, blockMs: Math.max(...blocks), medianBlockMs: median(blocks), parseMs: median(parses) });
      log(`event loop: ${name}: ${status}, blocked at most ${Math.max(...blocks).toFixed(0)} ms (median ${median(blocks).toFixed(0)} ms)`);
    }
    return { rounds, idleBlockMs, cases: out };
  } finally {
    await server.stop();
    rmSync(probeFile, { force: true });
  }
}

/** The result as a markdown section. */
export function renderEventLoop(r: EventLoopResult): string {
  return [
    "## Event-loop block of one maximum-size request",
    "",
    `One request at a time over a socket on 127.0.0.1, ${r.rounds} rounds each; the longest event-loop block minipod's process reported (perf_hooks \`monitorEventLoopDelay\`, 5 ms resolution) while the request was in flight. Idle, the loop was blocked at most ${r.idleBlockMs.toFixed(0)} ms.`,
    "",
    "The last column is `JSON.parse` of the same body in the bench's own process at the same time: the least any server that parses the body on its event loop is blocked, and a yardstick of the machine's speed at the time (the block's ratio to it is what carries to another machine).",
    "",
    "| request | body | answer | wall ms (worst) | block ms (worst) | block ms (median) | JSON.parse of the body, ms | median block ÷ parse |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...r.cases.map(
      (c) =>
        `| ${c.name} | ${(c.bytes / MB).toFixed(2)} MB | ${c.status} | ${c.wallMs.toFixed(0)} | ${c.blockMs.toFixed(0)} | ${c.medianBlockMs.toFixed(0)} | ${c.parseMs.toFixed(0)} | ${c.status === 200 ? (c.medianBlockMs / c.parseMs).toFixed(1) : "–"} |`,
    ),
    "",
  ].join("\n");
}
