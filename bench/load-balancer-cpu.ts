/**
 * minipod's CPU time a relayed request to a load-balancing endpoint's worker, at a fixed rate, for
 * this build and an earlier one side by side (alternated bursts): the figure that a shared machine
 * moves least, taken where both builds answer the same number of requests a second (at saturation
 * the CPU a request falls as the rate rises, since each wake-up handles more requests).
 *
 *   npm run build && npx tsx bench/load-balancer-cpu.ts --baseline <git ref> [--worker node|fastapi] [--rate 3000] [--rounds 3] [--seconds 4]
 *
 * Prints each burst and the medians; writes nothing.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { buildBaseline } from "./lib/baseline.js";
import { benchConfig } from "./lib/config.js";
import { CONNECTIONS } from "./lib/load.js";
import { AUTH, BENCH, cpuMs, freePort, startMinipod, waitFor200, type Server } from "./lib/processes.js";

const { values } = parseArgs({ options: { baseline: { type: "string" }, worker: { type: "string" }, rate: { type: "string" }, rounds: { type: "string" }, seconds: { type: "string" } } });
if (!values.baseline) throw new Error("give --baseline <git ref>: the build to compare with");
const kind = values.worker ?? "node";
const rate = Number(values.rate ?? 3000);
const rounds = Number(values.rounds ?? 3);
const seconds = Number(values.seconds ?? 4);

const port = await freePort();
const worker =
  kind === "fastapi"
    ? spawn("/usr/bin/python3", [join(BENCH, "../test/fixtures/python/lb_worker.py")], { stdio: "ignore", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: String(port), LOADING_PINGS: "0" } })
    : spawn(process.execPath, [join(BENCH, "servers/lb-worker.mjs"), String(port)], { stdio: "inherit" });
const hello = kind === "fastapi" ? "/stats" : "/hello";
const direct = `http://127.0.0.1:${port}`;
await waitFor200(`${direct}/ping`, worker, Date.now());
const config = await benchConfig([{ id: "api", type: "LOAD_BALANCER", handler: direct, workersMax: 1, requestCount: 1000 }]);
const builds: Record<"baseline" | "this build", Server> = {
  baseline: await startMinipod({ bin: buildBaseline(values.baseline, console.log), config }),
  "this build": await startMinipod({ config }),
};

/** Requests at `rate` a second for `s` seconds through one build. */
const load = (m: Server, s: number) => autocannon({ url: `${m.url}/lb/api${hello}`, connections: CONNECTIONS, duration: s, overallRate: rate, headers: AUTH });

const figures: Record<string, { minipod: number[]; worker: number[] }> = { baseline: { minipod: [], worker: [] }, "this build": { minipod: [], worker: [] } };
try {
  // The worker joins each pool once its health check (every 200 ms) says 200.
  for (const m of Object.values(builds)) {
    for (let i = 0; i < 100; i++) {
      const r = await fetch(`${m.url}/lb/api${hello}`, { headers: AUTH });
      await r.arrayBuffer();
      if (r.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  for (let round = 1; round <= rounds; round++) {
    const order = (round % 2 === 1 ? ["baseline", "this build"] : ["this build", "baseline"]) as Array<keyof typeof builds>;
    for (const name of order) {
      const m = builds[name];
      await load(m, 1);
      const before = { minipod: cpuMs(m.child.pid!), worker: cpuMs(worker.pid!) };
      const r = await load(m, seconds);
      const n = r.requests.total;
      const minipod = ((cpuMs(m.child.pid!) - before.minipod) * 1000) / n;
      const workerUs = ((cpuMs(worker.pid!) - before.worker) * 1000) / n;
      figures[name]!.minipod.push(minipod);
      figures[name]!.worker.push(workerUs);
      console.log(`round ${round}, ${name}: ${r.requests.average.toFixed(0)} req/s (${r.errors + r.non2xx} errors), CPU µs a request: minipod ${minipod.toFixed(1)}, worker ${workerUs.toFixed(1)}`);
    }
  }
} finally {
  for (const m of Object.values(builds)) await m.stop();
  worker.kill();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[]) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
for (const [name, f] of Object.entries(figures)) console.log(`${name} at ${rate} req/s, ${kind} worker: minipod ${range(f.minipod)} µs a request, the worker ${range(f.worker)} µs (median, range)`);
