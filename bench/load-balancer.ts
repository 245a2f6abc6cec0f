/**
 * A load-balancing endpoint's cost: requests per second to a worker's HTTP server through minipod
 * (`/lb/{endpoint_id}/...`) against the same server called directly, in alternated bursts, and the
 * time to the first byte of an event stream both ways. Writes bench/RESULTS-load-balancer.md.
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
const rows: Array<{ round: number; direct: number; via: number; cpuDirect: Cpu; cpuVia: Cpu }> = [];
const ttfb: { direct: number[]; via: number[] } = { direct: [], via: [] };
try {
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? (["direct", "via"] as const) : (["via", "direct"] as const);
    const rps: Record<string, number> = {};
    const cpu: Record<string, Cpu> = {};
    for (const which of order) {
      // CPU time (user + system, from /proc) of each process around the measured burst.
      let before = { minipod: 0, worker: 0, load: 0 };
      const read = () => ({ minipod: cpuMs(minipod.child.pid!), worker: cpuMs(worker.pid!), load: loadMs() });
      const r = await measure({ url: which === "direct" ? direct : minipod.url, method: "GET", path: which === "direct" ? hello : `/lb/api${hello}`, seconds, around: { before: () => void (before = read()), after: () => void (cpu[which] = perRequest(before, read())) } });
      if (r.errors > 0) throw new Error(`${which}: ${r.errors} errors`);
      rps[which] = r.rps;
      const per = cpu[which]!;
      const requests = r.requests;
      cpu[which] = { minipod: per.minipod / requests, worker: per.worker / requests, load: per.load / requests };
    }
    rows.push({ round, direct: rps.direct!, via: rps.via!, cpuDirect: cpu.direct!, cpuVia: cpu.via! });
    const v = cpu.via!;
    console.log(`round ${round}: direct ${rps.direct!.toFixed(0)} req/s, through minipod ${rps.via!.toFixed(0)} req/s (${(rps.via! / rps.direct!).toFixed(2)}x); CPU µs a request through minipod: minipod ${v.minipod.toFixed(1)}, worker ${v.worker.toFixed(1)} (direct ${cpu.direct!.worker.toFixed(1)}), load generator ${v.load.toFixed(1)} (direct ${cpu.direct!.load.toFixed(1)})`);
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

/** CPU µs spent by each process between two readings (ms), not yet divided by the requests. */
function perRequest(a: Cpu, b: Cpu): Cpu {
  return { minipod: (b.minipod - a.minipod) * 1000, worker: (b.worker - a.worker) * 1000, load: (b.load - a.load) * 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ratios = rows.map((r) => r.via / r.direct);
const lines = [
  `## ${kind} worker (${new Date().toISOString().slice(0, 10)}; ${rounds} rounds of ${seconds} s)`,
  "",
  kind === "fastapi" ? "FastAPI on uvicorn (`test/fixtures/python/lb_worker.py`), `GET /stats`." : "node's http answering a small JSON (`bench/servers/lb-worker.mjs`), `GET /hello`.",
  "",
  `Load average at the start: ${loadAtStart}.`,
  "",
  "| round | direct req/s | through minipod req/s | ratio | minipod CPU µs/req | worker CPU µs/req (direct, through) | load generator CPU µs/req (direct, through) |",
  "|---|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.round} | ${r.direct.toFixed(0)} | ${r.via.toFixed(0)} | ${(r.via / r.direct).toFixed(2)} | ${r.cpuVia.minipod.toFixed(1)} | ${r.cpuDirect.worker.toFixed(1)}, ${r.cpuVia.worker.toFixed(1)} | ${r.cpuDirect.load.toFixed(1)}, ${r.cpuVia.load.toFixed(1)} |`),
  "",
  `Median ratio: **${median(ratios).toFixed(2)}x** (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}). minipod's CPU a relayed request: **${median(rows.map((r) => r.cpuVia.minipod)).toFixed(1)} µs** (median; rounds ${Math.min(...rows.map((r) => r.cpuVia.minipod)).toFixed(1)}–${Math.max(...rows.map((r) => r.cpuVia.minipod)).toFixed(1)}); the worker's ${median(rows.map((r) => r.cpuDirect.worker)).toFixed(1)} µs called directly and ${median(rows.map((r) => r.cpuVia.worker)).toFixed(1)} through minipod; the load generator's ${median(rows.map((r) => r.cpuDirect.load)).toFixed(1)} and ${median(rows.map((r) => r.cpuVia.load)).toFixed(1)}.`,
  "",
  `Time to the first byte of an event stream (${streams} requests each way, a new connection each): direct ${median(ttfb.direct).toFixed(2)} ms, through minipod ${median(ttfb.via).toFixed(2)} ms (medians): **${(median(ttfb.via) - median(ttfb.direct)).toFixed(2)} ms added**.`,
  "",
];
const file = join(BENCH, "RESULTS-load-balancer.md");
const others = existsSync(file) ? readFileSync(file, "utf8").split(/(?=^## )/m).filter((s) => s.startsWith("## ") && !s.startsWith(`## ${kind} `)) : [];
const intro = "# Load-balancing endpoints: minipod in front of a worker\n\n`npx tsx bench/load-balancer.ts --worker node|fastapi`: requests per second to a worker's server called directly and through minipod (`/lb/{id}/...`), in alternated bursts, 16 connections, 127.0.0.1, 2 cores shared with the load generator and the worker; and the time to an event stream's first byte.\n\n";
writeFileSync(file, intro + [...others, lines.join("\n") + "\n"].sort().join(""));
console.log(lines.join("\n"));
