/**
 * Two builds side by side: `POST /run` and `GET /status` of this checkout's build and of another
 * (a baseline), loaded in alternated bursts so that whatever else the machine does falls on both
 * alike. Each burst gives two figures: requests per second, which follows whatever else the machine
 * runs, and the server's CPU time per request (user + system, from /proc), which waiting for a
 * core does not move: the figure to compare on a busy machine. Prints a table and writes it to
 * bench/RESULTS-ab.md.
 *
 *   npx tsx bench/ab.ts --baseline DIR [--rounds 5] [--seconds 4]
 *
 * DIR is another checkout with its build (`npm run build` there); `--baseline-ref` names it in
 * the report.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchConfig, ECHO } from "./lib/config.js";
import { call } from "./lib/http.js";
import { measure } from "./lib/load.js";
import { BENCH, cpuMs, startMinipod, type Server } from "./lib/processes.js";

const { values } = parseArgs({ options: { baseline: { type: "string" }, "baseline-ref": { type: "string" }, rounds: { type: "string" }, seconds: { type: "string" } } });
if (!values.baseline) throw new Error("--baseline DIR: another checkout, built");
const rounds = Number(values.rounds ?? 5);
const seconds = Number(values.seconds ?? 4);
const config = await benchConfig([ECHO]);
const servers: Record<"this" | "baseline", Server> = {
  this: await startMinipod({ config }),
  baseline: await startMinipod({ config, bin: join(values.baseline, "bin/minipod.js") }),
};
const body = JSON.stringify({ input: { prompt: "hello" } });
const jobOf = async (s: Server) => ((await call(s.url, "POST", `/v2/${ECHO.id}/run`, { input: {} })).body as { id: string }).id;
const jobs = { this: await jobOf(servers.this), baseline: await jobOf(servers.baseline) };
interface Side {
  rps: number;
  /** Server CPU µs per request answered in the measured run. */
  cpuUs: number;
}
const rows: Array<{ op: string; round: number; this: Side; baseline: Side }> = [];
try {
  for (const op of ["run", "status"] as const) {
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? (["this", "baseline"] as const) : (["baseline", "this"] as const);
      const side: Record<string, Side> = {};
      for (const which of order) {
        const s = servers[which];
        const pid = s.child.pid!;
        let cpu0 = 0;
        let cpu = 0;
        const around = { before: () => void (cpu0 = cpuMs(pid)), after: () => void (cpu = cpuMs(pid) - cpu0) };
        const plan =
          op === "run"
            ? { url: s.url, method: "POST" as const, path: `/v2/${ECHO.id}/run`, body, seconds, around }
            : { url: s.url, method: "GET" as const, path: `/v2/${ECHO.id}/status/${jobs[which]}`, seconds, around };
        const r = await measure(plan);
        side[which] = { rps: r.rps, cpuUs: (cpu * 1000) / Math.max(1, r.requests) };
      }
      const t = side.this!;
      const b = side.baseline!;
      rows.push({ op, round, this: t, baseline: b });
      console.log(
        `${op} round ${round}: this ${t.rps.toFixed(0)} req/s ${t.cpuUs.toFixed(1)} µs, baseline ${b.rps.toFixed(0)} req/s ${b.cpuUs.toFixed(1)} µs (${(t.rps / b.rps).toFixed(2)}x, CPU ${(t.cpuUs / b.cpuUs).toFixed(2)}x)`,
      );
    }
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const lines = [
  "# Two builds side by side",
  "",
  `Written by \`npx tsx bench/ab.ts\` on ${new Date().toISOString()}: this build against ${values["baseline-ref"] ?? values.baseline}, ${rounds} alternated rounds of ${seconds} s each, 16 connections on 127.0.0.1, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at the end.`,
  "",
  "Requests per second follow whatever else the machine runs; the server's CPU time per request (user + system, read from /proc around each measured burst) does not count time spent waiting for a core, so on a busy machine it is the figure to compare. A CPU ratio below 1 means this build spends less per request.",
  "",
  "| operation | round | this (req/s) | baseline (req/s) | ratio | this (CPU µs/req) | baseline (CPU µs/req) | CPU ratio |",
  "|---|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) =>
      `| ${r.op} | ${r.round} | ${r.this.rps.toFixed(0)} | ${r.baseline.rps.toFixed(0)} | ${(r.this.rps / r.baseline.rps).toFixed(2)}x | ${r.this.cpuUs.toFixed(1)} | ${r.baseline.cpuUs.toFixed(1)} | ${(r.this.cpuUs / r.baseline.cpuUs).toFixed(2)}x |`,
  ),
  ...(["run", "status"] as const).map((op) => {
    const of = rows.filter((r) => r.op === op);
    const m = (f: (r: (typeof rows)[number]) => number) => median(of.map(f));
    return `| ${op} | median | ${m((r) => r.this.rps).toFixed(0)} | ${m((r) => r.baseline.rps).toFixed(0)} | ${m((r) => r.this.rps / r.baseline.rps).toFixed(2)}x | ${m((r) => r.this.cpuUs).toFixed(1)} | ${m((r) => r.baseline.cpuUs).toFixed(1)} | ${m((r) => r.this.cpuUs / r.baseline.cpuUs).toFixed(2)}x |`;
  }),
  "",
];
writeFileSync(join(BENCH, "RESULTS-ab.md"), lines.join("\n"));
console.log(lines.join("\n"));
