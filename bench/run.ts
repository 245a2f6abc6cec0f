/**
 * `npm run bench`: measures minipod side by side with a bare Hono route and Stoplight Prism, and
 * writes the figures to bench/RESULTS.md. Every load is on 127.0.0.1, bounded in time and count.
 *
 * Options: --quick (short runs, written to bench/RESULTS-quick.md), --seconds N (each autocannon
 * run, default 10), --rounds N (default 3), --jobs N (lifecycle, default 100000), --clock-jobs N
 * (default 10000), --soak-seconds N (default 60), --stream-tokens N (tokens per streamed
 * completion, default 1000), --only a,b (throughput, lifecycle, clock, cold, soak, streaming,
 * workers, memory, loop), --memory-seconds N (each of the two memory soaks, default 120; its figures go to
 * bench/RESULTS-memory.md; the event-loop block of maximum-size requests, "loop", to bench/RESULTS-loop.md), --only retention
 * (not run by default: the long soak at --speed 10 with every kind of job and 100,000 API keys,
 * --retention-seconds N, default 3600, --retention-rate N turns a second, default 60; its section of
 * bench/RESULTS-memory.md), --only hostile (not run by default: malformed, oversized, slow and hostile
 * requests on every surface, at most 60 s; bench/RESULTS-hostile.md), --baseline REF (also measure the workers section on that commit, built in a temporary
 * folder), --out FILE.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { supportsRateLimitSwitch } from "./lib/config.js";
import { BENCH, ROOT } from "./lib/processes.js";
import { render, type Results } from "./lib/report.js";
import { clockAdvance } from "./sections/clock.js";
import { coldStart } from "./sections/cold-start.js";
import { lifecycle } from "./sections/lifecycle.js";
import { soak } from "./sections/soak.js";
import { streaming } from "./sections/streaming.js";
import { throughput } from "./sections/throughput.js";
import { workersBench } from "./sections/workers.js";
import { memorySoak, renderMemorySoak } from "./sections/memory-soak.js";
import { renderRetentionSoak, retentionSection, retentionSoak, writeRetentionSection } from "./sections/retention-soak.js";
import { eventLoop, renderEventLoop } from "./sections/event-loop.js";
import { buildBaseline } from "./lib/baseline.js";
import { writeHostile } from "./sections/hostile.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    seconds: { type: "string" },
    rounds: { type: "string" },
    jobs: { type: "string" },
    "clock-jobs": { type: "string" },
    "soak-seconds": { type: "string" },
    "memory-seconds": { type: "string" },
    "retention-seconds": { type: "string" },
    "retention-rate": { type: "string" },
    "stream-tokens": { type: "string" },
    only: { type: "string" },
    baseline: { type: "string" },
    out: { type: "string" },
  },
});
const num = (v: string | undefined, full: number, quick: number) => {
  const n = v === undefined ? (values.quick ? quick : full) : Number(v);
  if (!(n > 0)) throw new Error(`expected a positive number, got "${v}"`);
  return n;
};
const seconds = num(values.seconds, 10, 2);
const rounds = num(values.rounds, 3, 1);
const jobs = num(values.jobs, 100_000, 10_000);
const clockJobs = num(values["clock-jobs"], 10_000, 10_000);
const soakSeconds = num(values["soak-seconds"], 60, 10);
const memorySeconds = num(values["memory-seconds"], 120, 30);
const retentionSeconds = num(values["retention-seconds"], 3600, 600);
const retentionRate = num(values["retention-rate"], 60, 60);
/** The heap limit (MB) the README suggests for a bounded process, and the memory soak runs with. */
const MEMORY_HEAP_MB = 384;
const streamTokens = num(values["stream-tokens"], 1000, 200);
const all = ["throughput", "lifecycle", "clock", "cold", "soak", "streaming", "workers", "memory", "loop"];
const only = new Set(values.only ? values.only.split(",") : all);
for (const s of only) if (![...all, "retention", "hostile"].includes(s)) throw new Error(`unknown section "${s}"; choose from ${all.join(", ")}, retention, hostile`);
const partial = values.quick || only.size < all.length || values.seconds !== undefined || values["soak-seconds"] !== undefined || values.jobs !== undefined;
const out = values.out ?? join(BENCH, partial ? "RESULTS-quick.md" : "RESULTS.md");

if (!existsSync(join(ROOT, "dist/minipod.js"))) throw new Error("dist/ is missing: run `npm run build` first (npm run bench does)");
const log = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const prismPkg = join(BENCH, "node_modules/@stoplight/prism-cli/package.json");

const results: Results = {
  started: new Date(),
  seconds,
  prismVersion: existsSync(prismPkg) ? (JSON.parse(readFileSync(prismPkg, "utf8")) as { version: string }).version : undefined,
  rateLimitsOff: await supportsRateLimitSwitch(),
};
/** A section that fails is logged and left out; the others still run and are written. */
const failed: string[] = [];
async function section(name: string, run: () => Promise<void>): Promise<void> {
  if (!only.has(name)) return;
  try {
    await run();
  } catch (e) {
    failed.push(name);
    log(`${name} failed: ${(e as Error).stack ?? String(e)}`);
  }
}
await section("throughput", async () => void (results.throughput = await throughput(seconds, rounds, log)));
await section("lifecycle", async () => void (results.lifecycle = await lifecycle(jobs, log)));
await section("clock", async () => void (results.clock = await clockAdvance(clockJobs, values.quick ? 1 : 3, log)));
await section("cold", async () => void (results.coldStart = await coldStart(values.quick ? 3 : 5, log)));
await section("soak", async () => void (results.soak = await soak(soakSeconds, log)));
await section("streaming", async () => void (results.streaming = await streaming(streamTokens, values.quick ? 5 : 20, rounds, log)));
await section("workers", async () => {
  const baseline = values.baseline ? { ref: values.baseline, bin: buildBaseline(values.baseline, log) } : undefined;
  results.workers = await workersBench({ baseline, quick: values.quick ?? false }, log);
});
await section("memory", async () => {
  // With the heap limit the README suggests, and with node's default one.
  const runs = [await memorySoak(memorySeconds, log, [`--max-old-space-size=${MEMORY_HEAP_MB}`]), await memorySoak(memorySeconds, log)];
  const header = `- date: ${new Date().toISOString()}\n- node ${process.version}; minipod run from dist/ through bin/minipod.js; all traffic on 127.0.0.1; load average at the end ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`;
  const kept = retentionSection(join(BENCH, "RESULTS-memory.md"));
  writeFileSync(join(BENCH, "RESULTS-memory.md"), renderMemorySoak(runs, header) + (kept ? `\n${kept}` : "") + "\n");
  for (const r of runs)
    log(`memory soak (${r.nodeArgs.join(" ") || "default heap"}): steady ${(r.steadyRss / 1024 / 1024).toFixed(0)} MB, peak ${(r.peakRss / 1024 / 1024).toFixed(0)} MB, ${r.errors} errors`);
  log("wrote bench/RESULTS-memory.md");
});
await section("retention", async () => {
  const r = await retentionSoak(retentionSeconds, retentionRate, log);
  const header = `- date: ${new Date().toISOString()}\n- node ${process.version}; minipod run from dist/ through bin/minipod.js; all traffic on 127.0.0.1; load average at the end ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`;
  writeRetentionSection(join(BENCH, "RESULTS-memory.md"), renderRetentionSoak(r, header));
  log(`retention soak: ${r.requests} requests, RSS by period ${r.periods.map((p) => p.rssMb.toFixed(0)).join(" ")} MB, change ${(r.growth * 100).toFixed(1)} %`);
});
await section("loop", async () => {
  const loop = await eventLoop(values.quick ? 1 : 5, log);
  const header = `# How long one maximum-size request blocks the event loop\n\nWritten by \`npm run bench -- --only loop\` (bench/sections/event-loop.ts). Do not edit by hand.\n\n- date: ${new Date().toISOString()}\n- node ${process.version}; minipod run from dist/ through bin/minipod.js; all traffic on 127.0.0.1; load average at the end ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores\n`;
  writeFileSync(join(BENCH, "RESULTS-loop.md"), header + "\n" + renderEventLoop(loop) + "\n");
  log("wrote bench/RESULTS-loop.md");
});

await section("hostile", async () => void (await writeHostile(log)));
if (only.size === 1 && only.has("hostile")) process.exit(failed.length ? 1 : 0);

const text = render(results);
// A run with a failed section is partial: it never replaces the full run's RESULTS.md.
const written = failed.length && !values.out ? join(BENCH, "RESULTS-quick.md") : out;
writeFileSync(written, text + "\n");
log(`wrote ${written}`);
process.stdout.write(text.split("## Throughput")[0]!);
if (failed.length) log(`failed: ${failed.join(", ")} (see above)`);
process.exit(failed.length ? 1 : 0);
