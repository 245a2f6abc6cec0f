/**
 * Two builds side by side: `POST /run` and `GET /status` of this checkout's build and of another
 * (a baseline), loaded in alternated bursts so that whatever else the machine does falls on both
 * alike. Prints a table and writes it to bench/RESULTS-ab.md.
 *
 *   npx tsx bench/ab.ts --baseline DIR [--rounds 5] [--seconds 4]
 *
 * DIR is another checkout with its build (`npm run build` there); `--baseline-ref` names it in
 * the report.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { benchConfig, ECHO } from "./lib/config.js";
import { call } from "./lib/http.js";
import { measure } from "./lib/load.js";
import { BENCH, startMinipod, type Server } from "./lib/processes.js";

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
const rows: Array<{ op: string; round: number; this: number; baseline: number }> = [];
try {
  for (const op of ["run", "status"] as const) {
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? (["this", "baseline"] as const) : (["baseline", "this"] as const);
      const rps: Record<string, number> = {};
      for (const which of order) {
        const s = servers[which];
        const plan = op === "run" ? { url: s.url, method: "POST" as const, path: `/v2/${ECHO.id}/run`, body, seconds } : { url: s.url, method: "GET" as const, path: `/v2/${ECHO.id}/status/${jobs[which]}`, seconds };
        rps[which] = (await measure(plan)).rps;
      }
      rows.push({ op, round, this: rps.this!, baseline: rps.baseline! });
      console.log(`${op} round ${round}: this ${rps.this!.toFixed(0)} req/s, baseline ${rps.baseline!.toFixed(0)} req/s (${(rps.this! / rps.baseline!).toFixed(2)}x)`);
    }
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const lines = [
  "# Two builds side by side",
  "",
  `Written by \`npx tsx bench/ab.ts\` on ${new Date().toISOString()}: this build against ${values["baseline-ref"] ?? values.baseline}, ${rounds} alternated rounds of ${seconds} s each, 16 connections on 127.0.0.1.`,
  "",
  "| operation | round | this (req/s) | baseline (req/s) | ratio |",
  "|---|---:|---:|---:|---:|",
  ...rows.map((r) => `| ${r.op} | ${r.round} | ${r.this.toFixed(0)} | ${r.baseline.toFixed(0)} | ${(r.this / r.baseline).toFixed(2)}x |`),
  ...(["run", "status"] as const).map((op) => {
    const of = rows.filter((r) => r.op === op);
    return `| ${op} | median | ${median(of.map((r) => r.this)).toFixed(0)} | ${median(of.map((r) => r.baseline)).toFixed(0)} | ${median(of.map((r) => r.this / r.baseline)).toFixed(2)}x |`;
  }),
  "",
];
writeFileSync(join(BENCH, "RESULTS-ab.md"), lines.join("\n"));
console.log(lines.join("\n"));
