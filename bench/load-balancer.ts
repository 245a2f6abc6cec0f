/**
 * A load-balancing endpoint's cost: requests per second to a worker's HTTP server through minipod
 * (`/lb/{endpoint_id}/...`) against the same server called directly, in alternated bursts, and the
 * time to the first byte of an event stream both ways. Beside each burst's req/s, the CPU µs a
 * request of minipod, the worker and the load generator (this process): on a shared machine the
 * req/s move with the neighbours' load, CPU time a request much less. Writes
 * bench/RESULTS-load-balancer.md.
 *
 *   npm run build && npx tsx bench/load-balancer.ts [--worker node|fastapi] [--rounds 5] [--seconds 4] [--streams 50]
 *
 * `node`: node's http answering a small JSON (bench/servers/lb-worker.mjs), as fast as a worker
 * gets; `fastapi`: the FastAPI worker of the end-to-end tests on uvicorn (Debian's packages).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchConfig } from "./lib/config.js";
import { measure } from "./lib/load.js";
import { AUTH, BENCH, cpuMs, freePort, startMinipod, waitFor200 } from "./lib/processes.js";

const { values } = parseArgs({ options: { worker: { type: "string" }, rounds: { type: "string" }, seconds: { type: "string" }, streams: { type: "string" } } });
const kind = values.worker ?? "node";
const rounds = Number(values.rounds ?? 5);
const seconds = Number(values.seconds ?? 4);
const streams = Number(values.streams ?? 50);

/** The status of one GET. */
function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { headers: AUTH }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", () => resolve(0));
    req.end();
  });
}

/** Wall ms from sending a GET to its answer's first body byte (a new connection each time). */
function firstByte(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { headers: AUTH, agent: false }, (res) => {
      res.once("data", () => {
        resolve(performance.now() - started);
        res.resume();
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const loadAtStart = (await import("node:os")).loadavg().map((l) => l.toFixed(2)).join(", ");
const port = await freePort();
const worker =
  kind === "fastapi"
    ? spawn("/usr/bin/python3", [join(BENCH, "../test/fixtures/python/lb_worker.py")], { stdio: "inherit", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port), LOADING_PINGS: "0" } })
    : spawn(process.execPath, [join(BENCH, "servers/lb-worker.mjs"), String(port)], { stdio: "inherit" });
const hello = kind === "fastapi" ? "/stats" : "/hello";
const direct = `http://127.0.0.1:${port}`;
await waitFor200(`${direct}/ping`, worker, Date.now());
const minipod = await startMinipod({ config: await benchConfig([{ id: "api", type: "LOAD_BALANCER", handler: direct, workersMax: 1, requestCount: 1000 }]) });
const via = `${minipod.url}/lb/api`;
// The worker joins the pool once its health check (every 200 ms) says 200.
for (let i = 0; i < 100 && (await status(`${via}${hello}`)) !== 200; i++) await new Promise((r) => setTimeout(r, 100));

/** CPU µs a request of each process over one measured burst: minipod, the worker, and this process (the load generator). */
interface Cpu {
  minipod: number;
  worker: number;
  load: number;
}
/** One burst: req/s and each process's CPU µs a request. */
interface Burst {
  rps: number;
  cpu: Cpu;
}
/** Each process's CPU ms so far (user + system, from /proc; this process's from node). */
const cpuNow = (): Cpu => ({ minipod: cpuMs(minipod.child.pid!), worker: cpuMs(worker.pid!), load: loadMs() });

/** A measured burst to the worker directly or through minipod, with the CPU each process spent on it. */
async function burst(which: "direct" | "via"): Promise<Burst> {
  let before = cpuNow();
  let after = before;
  const r = await measure({
    url: which === "direct" ? direct : minipod.url,
    method: "GET",
    path: which === "direct" ? hello : `/lb/api${hello}`,
    seconds,
    around: { before: () => void (before = cpuNow()), after: () => void (after = cpuNow()) },
  });
  if (r.errors > 0) throw new Error(`${which}: ${r.errors} errors`);
  const per = (k: keyof Cpu) => ((after[k] - before[k]) * 1000) / r.requests;
  return { rps: r.rps, cpu: { minipod: per("minipod"), worker: per("worker"), load: per("load") } };
}

const rows: Array<{ round: number; direct: Burst; via: Burst }> = [];
const ttfb: { direct: number[]; via: number[] } = { direct: [], via: [] };
try {
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? (["direct", "via"] as const) : (["via", "direct"] as const);
    const got: Partial<Record<"direct" | "via", Burst>> = {};
    for (const which of order) got[which] = await burst(which);
    const row = { round, direct: got.direct!, via: got.via! };
    rows.push(row);
    const v = row.via.cpu;
    console.log(
      `round ${round}: direct ${row.direct.rps.toFixed(0)} req/s, through minipod ${row.via.rps.toFixed(0)} req/s (${(row.via.rps / row.direct.rps).toFixed(2)}x); CPU µs a request through minipod: minipod ${v.minipod.toFixed(1)}, worker ${v.worker.toFixed(1)} (direct ${row.direct.cpu.worker.toFixed(1)}), load generator ${v.load.toFixed(1)} (direct ${row.direct.cpu.load.toFixed(1)})`,
    );
  }
  const stream = kind === "fastapi" ? "/stream?n=2&delay=0.05" : "/stream";
  for (let i = 0; i < streams; i++) {
    ttfb.direct.push(await firstByte(`${direct}${stream}`));
    ttfb.via.push(await firstByte(`${via}${stream}`));
  }
} finally {
  await minipod.stop();
  worker.kill();
}

/** This process's CPU ms so far (user + system): the load generator runs in it. */
function loadMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratios = rows.map((r) => r.via.rps / r.direct.rps);
/** Median and range of a figure over the rounds. */
const spread = (xs: number[], digits = 1) => `${median(xs).toFixed(digits)} (rounds ${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
/** Share of one core a process took in a burst: CPU µs a request times requests a second. */
const cores = (b: Burst, k: keyof Cpu) => (b.cpu[k] * b.rps) / 1e6;
const lines = [
  `## ${kind} worker (${new Date().toISOString().slice(0, 10)}; ${rounds} rounds of ${seconds} s)`,
  "",
  kind === "fastapi" ? "FastAPI on uvicorn (`test/fixtures/python/lb_worker.py`), `GET /stats`." : "node's http answering a small JSON (`bench/servers/lb-worker.mjs`), `GET /hello`.",
  "",
  `Load average at the start (1, 5, 15 min): ${loadAtStart}. CPU is user + system time from /proc, read around each measured burst and divided by its requests.`,
  "",
  "| round | direct req/s | through minipod req/s | ratio | minipod CPU µs/req | worker CPU µs/req (direct, through) | load generator CPU µs/req (direct, through) | cores taken directly (worker, load generator) | cores taken through minipod (minipod, worker, load generator) |",
  "|---|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (r) =>
      `| ${r.round} | ${r.direct.rps.toFixed(0)} | ${r.via.rps.toFixed(0)} | ${(r.via.rps / r.direct.rps).toFixed(2)} | ${r.via.cpu.minipod.toFixed(1)} | ${r.direct.cpu.worker.toFixed(1)}, ${r.via.cpu.worker.toFixed(1)} | ${r.direct.cpu.load.toFixed(1)}, ${r.via.cpu.load.toFixed(1)} | ${cores(r.direct, "worker").toFixed(2)}, ${cores(r.direct, "load").toFixed(2)} | ${cores(r.via, "minipod").toFixed(2)}, ${cores(r.via, "worker").toFixed(2)}, ${cores(r.via, "load").toFixed(2)} |`,
  ),
  "",
  `Median ratio: **${median(ratios).toFixed(2)}x** (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}). minipod's CPU a relayed request: **${spread(rows.map((r) => r.via.cpu.minipod))} µs**; the worker's ${spread(rows.map((r) => r.direct.cpu.worker))} µs called directly and ${spread(rows.map((r) => r.via.cpu.worker))} through minipod; the load generator's ${spread(rows.map((r) => r.direct.cpu.load))} and ${spread(rows.map((r) => r.via.cpu.load))}.`,
  "",
  `Time to the first byte of an event stream (${streams} requests each way, a new connection each): direct ${median(ttfb.direct).toFixed(2)} ms, through minipod ${median(ttfb.via).toFixed(2)} ms (medians): **${(median(ttfb.via) - median(ttfb.direct)).toFixed(2)} ms added**.`,
  "",
];
const file = join(BENCH, "RESULTS-load-balancer.md");
const others = existsSync(file)
  ? readFileSync(file, "utf8")
      .split(/(?=^## )/m)
      .filter((s) => s.startsWith("## ") && !s.startsWith(`## ${kind} `))
  : [];
const intro =
  "# Load-balancing endpoints: minipod in front of a worker\n\n`npx tsx bench/load-balancer.ts --worker node|fastapi`: requests per second to a worker's server called directly and through minipod (`/lb/{id}/...`), in alternated bursts, 16 connections, 127.0.0.1, 2 cores shared with the load generator and the worker, with each process's CPU µs a request and the share of the cores it took; and the time to an event stream's first byte.\n\n";
writeFileSync(file, intro + [...others, lines.join("\n") + "\n"].sort().join(""));
console.log(lines.join("\n"));
