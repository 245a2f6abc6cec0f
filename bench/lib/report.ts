import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { arch, cpus, platform, release, totalmem } from "node:os";
import { join } from "node:path";
import type { ClockResult } from "../sections/clock.js";
import type { ColdStartResult } from "../sections/cold-start.js";
import type { LifecycleResult } from "../sections/lifecycle.js";
import type { SoakResult } from "../sections/soak.js";
import type { StreamBatch, StreamingResult } from "../sections/streaming.js";
import type { WorkersResult } from "../sections/workers.js";
import { TARGETS, type Op, type Target, type ThroughputResult } from "../sections/throughput.js";
import { CONNECTIONS, type LoadResult } from "./load.js";
import { ROOT } from "./processes.js";

export interface Results {
  started: Date;
  seconds: number;
  prismVersion: string | undefined;
  rateLimitsOff: boolean;
  throughput?: ThroughputResult;
  lifecycle?: LifecycleResult;
  clock?: ClockResult;
  coldStart?: ColdStartResult;
  soak?: SoakResult;
  streaming?: StreamingResult;
  workers?: WorkersResult;
}

const median = (xs: number[]) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const n0 = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "n/a");
const n2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
const mb = (b: number | undefined) => (b === undefined ? "n/a" : `${(b / 1024 / 1024).toFixed(0)} MB`);
/** "figure": a row with no goal, only a figure to report. */
const mark = (ok: boolean | "figure" | undefined) => (ok === "figure" ? "—" : ok === undefined ? "not run" : ok ? "met" : "**missed**");

function commit(): string {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

interface TargetRow {
  what: string;
  measured: string;
  goal: string;
  ok: boolean | "figure" | undefined;
}

function targets(r: Results): TargetRow[] {
  const rows: TargetRow[] = [];
  const t = r.throughput;
  for (const [op, bareGoal] of [["run", 0.5], ["status", 0.7]] as const) {
    const bare = t ? median(t.ratios[op].bare) : NaN;
    rows.push({ what: `/${op} vs bare Hono route`, measured: `${n2(bare)}x`, goal: `≥ ${bareGoal}x`, ok: t ? bare >= bareGoal : undefined });
    const prism = t ? median(t.ratios[op].prism) : NaN;
    rows.push({ what: `/${op} vs Prism`, measured: t?.prismError ? "Prism did not run" : `${n2(prism)}x`, goal: "≥ 10x", ok: t && !t.prismError ? prism >= 10 : undefined });
  }
  const l = r.lifecycle;
  rows.push({
    what: `lifecycle: ${l ? n0(l.jobs) : "100,000"} jobs over HTTP`,
    measured: l ? `${n0(l.jobsPerSecond)} jobs/s` : "",
    goal: "≥ 5,000 jobs/s",
    ok: l ? l.jobsPerSecond >= 5000 && l.errors === 0 : undefined,
  });
  rows.push({ what: "lifecycle: peak RSS", measured: mb(l?.peakRssBytes), goal: "< 300 MB", ok: l?.peakRssBytes === undefined ? undefined : l.peakRssBytes < 300 * 1024 * 1024 });
  const c = r.clock;
  rows.push({
    what: `clock: advance 7 days, ${c ? n0(c.jobs) : "10,000"} pending jobs (median)`,
    measured: c ? `${n0(c.advanceMs)} ms` : "",
    goal: "< 1000 ms",
    ok: c ? c.advanceMs < 1000 : undefined,
  });
  const cs = r.coldStart;
  rows.push({ what: "cold start to first 200 on /health (median)", measured: cs ? `${n0(median(cs.minipodMs))} ms` : "", goal: "< 500 ms", ok: cs ? median(cs.minipodMs) < 500 : undefined });
  const s = r.soak;
  rows.push({ what: `soak ${s?.seconds ?? 60} s: RSS growth after warm-up`, measured: s ? `${(s.growth * 100).toFixed(1)} %` : "", goal: "< 10 %", ok: s ? s.growth < 0.1 : undefined });
  rows.push({ what: "soak: errors", measured: s ? String(s.errors) : "", goal: "0", ok: s ? s.errors === 0 : undefined });
  const st = r.streaming;
  if (st && !st.skipped) {
    const rate = median(st.long.minipod.concurrent.map(aggregateRate)) / median(st.long.bare.concurrent.map(aggregateRate));
    rows.push({ what: `OpenAI streaming: chunks/s, ${st.concurrent} streams at once, vs a bare SSE route`, measured: `${n2(rate)}x`, goal: "reported", ok: "figure" });
  }
  const w = r.workers?.runs.find((x) => x.label.startsWith("after"));
  rows.push({
    what: "Python worker runtime: jobs completed",
    measured: w ? `${n0(w.completed)} of ${n0(w.jobs)}, ${n0(w.jobsPerSecond)} jobs/s` : "",
    goal: "all",
    ok: w ? w.completed === w.jobs : undefined,
  });
  rows.push({ what: "an idle Python worker: requests/s", measured: w ? n2(w.idleRequestsPerSecond) : "", goal: "< 1", ok: w ? w.idleRequestsPerSecond < 1 : undefined });
  return rows;
}

function throughputSection(t: ThroughputResult, seconds: number): string[] {
  const lines = [
    `## Throughput and latency`,
    "",
    `autocannon, ${CONNECTIONS} connections, 127.0.0.1, ${seconds} s per run after a short warm-up, ${t.rounds} round(s); in each round the servers are loaded one after the other, so each round gives one ratio measured back to back. Figures are medians over the rounds.`,
    "",
    "| server | operation | req/s | p50 ms | p99 ms | requests | errors |",
    "|---|---|---:|---:|---:|---:|---:|",
  ];
  const label: Record<Target, string> = { minipod: "minipod", noJournal: "minipod, journal off", floor: "floor: one INSERT per job", bare: "bare Hono route", prism: "Prism mock" };
  for (const op of ["run", "status"] as Op[]) {
    for (const target of TARGETS) {
      const rs: LoadResult[] = t.runs[op][target];
      if (!rs.length) continue;
      const path = op === "run" ? "POST /run" : "GET /status";
      lines.push(
        `| ${label[target]} | ${path} | ${n0(median(rs.map((r) => r.rps)))} | ${n0(median(rs.map((r) => r.p50)))} | ${n0(median(rs.map((r) => r.p99)))} | ${n0(rs.reduce((a, r) => a + r.requests, 0))} | ${rs.reduce((a, r) => a + r.errors, 0)} |`,
      );
    }
  }
  lines.push("", "Ratios per round (minipod ÷ other):", "");
  for (const op of ["run", "status"] as Op[]) {
    const floor = t.ratios[op].floor.length ? `; vs floor ${t.ratios[op].floor.map(n2).join(", ")}` : "";
    lines.push(`- /${op}: vs bare ${t.ratios[op].bare.map(n2).join(", ")}; vs Prism ${t.prismError ? "n/a" : t.ratios[op].prism.map(n2).join(", ")}${floor}`);
  }
  if (t.floorVsPrism.run.length) {
    lines.push("", `The floor ÷ Prism per round: /run ${t.floorVsPrism.run.map(n2).join(", ")}; /status ${t.floorVsPrism.status.map(n2).join(", ")}.`);
  }
  if (t.prismError) lines.push("", `Prism could not be started: ${t.prismError}`);
  if (t.runs.run.floor.length) {
    lines.push(
      "",
      "\"floor: one INSERT per job\" (bench/servers/floor.ts) is the least a server that keeps its jobs can do on this stack with every request going through the framework: Hono, @hono/node-server and better-sqlite3, /run reading the body (straight from node's request, as minipod does), giving it an id that sorts by creation (as minipod's do) and writing one row (in-memory database, autocommit, no index but the key), /status reading it back. It has no validation schema, queue, worker, deadline, timeline or journal: it does less than the specification asks of every job. minipod answers POST /run and GET /status from node's request rather than through Hono, as fast entries of its route table behind the same gate (src/http/fast-routes.ts); its answers wait until the writes of their event-loop turn are committed together, where the floor writes its row and answers at once.",
    );
  }
  if (t.runs.run.noJournal.length)
    lines.push("", '"minipod, journal off" is the same emulator with `journal: { maxEntries: 0 }`: the request journal writes one row per request; the ratios use the default (journal on).');
  lines.push("", `Prism mocks minipod's own /openapi.json (${n0(t.openapiBytes)} bytes) with static examples, log level warn.`);
  return lines;
}

const ttfts = (bs: StreamBatch[]) => bs.flatMap((b) => b.samples.map((s) => s.ttftMs));
/** Content chunks per second of one stream, request to end. */
const streamRates = (bs: StreamBatch[]) => bs.flatMap((b) => b.samples.map((s) => s.tokens / (s.totalMs / 1000)));
/** Content chunks per second of a whole batch, every stream together. */
const aggregateRate = (b: StreamBatch) => b.samples.reduce((sum, s) => sum + s.tokens, 0) / (b.wallMs / 1000);

function streamingSection(st: StreamingResult): string[] {
  if (st.skipped) return ["## OpenAI streaming", "", `Not run: ${st.skipped}.`];
  const [f, l] = [st.firstToken, st.long];
  const row = (what: string, mv: number, bv: number, digits: (x: number) => string) => `| ${what} | ${digits(mv)} | ${digits(bv)} | ${n2(mv / bv)}x |`;
  const ms1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
  const perRound = l.minipod.concurrent.map((c, i) => n2(aggregateRate(c) / aggregateRate(l.bare.concurrent[i]!)));
  return [
    "## OpenAI streaming",
    "",
    `Streamed chat completions (\`POST /v2/llm/openai/v1/chat/completions\`, \`stream: true\`) read to the end by a node:http client on 127.0.0.1: minipod's built-in \`openai\` handler with no token delay (each request a job on one of ${st.concurrent} warm workers, each token a stream chunk stored and relayed as an SSE event as it comes), side by side with a bare SSE route on the same stack (bench/servers/bare.ts: Hono on @hono/node-server sending the same events from a ReadableStream, with no job behind them). ${st.rounds} round(s), the two servers one after the other in each. The time to the first token is taken on one-token replies (${st.streams * 2} one at a time, ${st.streams * st.concurrent} with ${st.concurrent} at once): a handler that never waits makes its whole reply in one turn of the event loop, so on a long reply nothing could leave before its last token. Chunk rates are taken on ${n0(st.tokens)}-token replies (${st.streams} one at a time, ${st.streams * st.concurrent} with ${st.concurrent} at once), from the request to the end of the stream. Medians over every stream or batch.`,
    "",
    "| | minipod | bare SSE route | minipod ÷ bare |",
    "|---|---:|---:|---:|",
    row("time to first token, one stream at a time (ms)", median(ttfts(f.minipod.single)), median(ttfts(f.bare.single)), ms1),
    row(`time to first token, ${st.concurrent} streams at once (ms)`, median(ttfts(f.minipod.concurrent)), median(ttfts(f.bare.concurrent)), ms1),
    row("chunks/s of one stream", median(streamRates(l.minipod.single)), median(streamRates(l.bare.single)), n0),
    row(`chunks/s, ${st.concurrent} streams at once, all together`, median(l.minipod.concurrent.map(aggregateRate)), median(l.bare.concurrent.map(aggregateRate)), n0),
    "",
    `Chunks/s ratio per round (${st.concurrent} streams at once, minipod ÷ bare): ${perRound.join(", ")}.`,
  ];
}

/** Renders RESULTS.md. */
export function render(r: Results): string {
  const cpu = cpus();
  const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  const lines = [
    "# minipod benchmark results",
    "",
    `Written by \`npm run bench\` (bench/run.ts). Do not edit by hand; see bench/PROFILING.md for profiles and before/after figures.`,
    "",
    `- date: ${r.started.toISOString()}`,
    `- machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB RAM, ${platform()} ${release()} ${arch()}`,
    `- node ${process.version}; minipod ${version} (commit ${commit()}), run from dist/ through bin/minipod.js; Prism ${r.prismVersion ?? "not installed"}`,
    `- all traffic on 127.0.0.1; minipod logs at warn; rate limits ${r.rateLimitsOff ? "off (`rateLimits.enabled: false`)" : "on (this build has no switch to turn them off)"}`,
    `- the bench and the servers share the machine's cores with whatever else runs on it: figures from a busy machine are lower and noisier`,
    "",
    "## Targets",
    "",
    "| what | measured | goal | |",
    "|---|---:|---:|---|",
    ...targets(r).map((t) => `| ${t.what} | ${t.measured} | ${t.goal} | ${mark(t.ok)} |`),
    "",
  ];
  const t = r.throughput;
  if (t?.floorVsPrism.run.length) {
    lines.push(
      `For scale: the floor of a server that keeps its jobs (one INSERT per job and nothing else; see below) reached ${n2(median(t.floorVsPrism.run))}x Prism on /run in the same rounds, and minipod ${n2(median(t.ratios.run.floor))}x the floor.`,
      "",
    );
  }
  if (r.throughput) lines.push(...throughputSection(r.throughput, r.seconds), "");
  const l = r.lifecycle;
  if (l) {
    lines.push(
      "## End-to-end lifecycle (manual clock)",
      "",
      `${n0(l.jobs)} POST /run over HTTP (autocannon, ${CONNECTIONS} connections; ${n0(l.accepted)} answered 200, ${l.errors} errors), each completed by the echo workers; timed from the first request to /health reporting every job COMPLETED: ${l.seconds.toFixed(2)} s, **${n0(l.jobsPerSecond)} jobs/s**. One advance of 31 minutes then ended the result retention of all of them in ${n0(l.sweepMs)} ms (completed afterwards: ${l.completedAfterSweep}). Peak RSS (VmHWM): **${mb(l.peakRssBytes)}**.`,
      "",
    );
  }
  const c = r.clock;
  if (c) {
    lines.push(
      "## Clock",
      "",
      `${n0(c.jobs)} jobs pending on a scripted endpoint (20 workers, 1 s cold start) whose handler would sleep 8 days, with execution timeouts from 5 s to 2 h and ttls from 10 s to 7 days. One \`POST /_emulator/clock/advance {"ms": 604800000}\` (timeouts, ttl expiries, cold starts, idle scale-downs and retention ends on the way), ${c.runsMs.length} time(s) on a fresh emulator: median **${n0(c.advanceMs)} ms** (runs: ${c.runsMs.map(n0).join(", ")}). Timers before: ${c.timersBefore}, after: ${c.timersAfter}. Health after: \`${JSON.stringify(c.healthAfter)}\`.`,
      "",
    );
  }
  const cs = r.coldStart;
  if (cs) {
    lines.push(
      "## Cold start",
      "",
      "Process spawn to the first 200 on `GET /v2/echo/health` (polled every 2 ms).",
      "",
      `- minipod (\`node bin/minipod.js\`, in-memory database): median **${n0(median(cs.minipodMs))} ms** (runs: ${cs.minipodMs.map(n0).join(", ")})`,
      `- Prism: ${cs.prismMs.length ? `median ${n0(median(cs.prismMs))} ms (runs: ${cs.prismMs.map(n0).join(", ")})` : `did not run: ${cs.prismError}`}`,
      "",
    );
  }
  const s = r.soak;
  if (s) {
    const every = Math.max(1, Math.round(s.rss.length / 12));
    lines.push(
      "## Soak",
      "",
      `${s.seconds} s of mixed load from ${CONNECTIONS} lanes on the real clock at speed ${s.speed.toFixed(0)} (the 30-minute result retention lasts ${(s.seconds / 3).toFixed(0)} s, so old jobs are swept during the run): ${n0(s.requests)} requests (${Object.entries(
        s.byOp,
      )
        .map(([k, v]) => `${k} ${n0(v)}`)
        .join(", ")}), **${s.errors} errors**${s.errorSamples.length ? ` (e.g. ${s.errorSamples.join("; ")})` : ""}.`,
      "",
      `RSS after warm-up (${s.warmupSeconds} s): ${mb(s.baselineRss)} at first, ${mb(s.endRss)} at the end (means of the first and last tenth of the samples): **${(s.growth * 100).toFixed(1)} % growth**. Echo endpoint at the end: \`${JSON.stringify(s.jobsAtEnd)}\`.`,
      "",
      "| s | " + s.rss.filter((_, i) => i % every === 0).map(([t]) => t.toFixed(0)).join(" | ") + " |",
      "|---|" + s.rss.filter((_, i) => i % every === 0).map(() => "---:").join("|") + "|",
      "| RSS MB | " + s.rss.filter((_, i) => i % every === 0).map(([, b]) => (b / 1024 / 1024).toFixed(0)).join(" | ") + " |",
      "",
    );
  }
  if (r.streaming) lines.push(...streamingSection(r.streaming), "");
  if (r.workers) lines.push(...workersSection(r.workers));
  return lines.join("\n");
}

function workersSection(w: WorkersResult): string[] {
  const lines = ["## Worker processes: the service's Python worker runtime", ""];
  if (w.pythonError) return [...lines, `Not run: the service's library cannot be imported by /usr/bin/python3 (${w.pythonError}).`, ""];
  lines.push(
    `${w.workers} processes of the service's own worker runtime (\`runpod.serverless.start\`, release 1.12.0 as published, under Debian's python3), each taking ${w.concurrency} jobs at a time (\`concurrency_modifier\`), on an \`external\` endpoint of a real-clock minipod. First the idle workers are watched (requests counted in the journal), then the jobs are submitted with /run and timed until /health counts them all done (or a time limit passes). "before" is an earlier commit built side by side in the same run, its workers given the environment its README described; "after" is this build with the platform's form (what \`minipod worker\` sets).`,
    "",
    "The library paces itself: when all its job slots are taken it sleeps 1 s before it asks for more, so one worker completes at most about `concurrency` jobs a second whatever the server; the jobs/s say the runtime works end to end (and where the Python processes' CPU ends), not how fast minipod is (the lifecycle section of a full run says that). An idle worker sends its heartbeat every 10 s and holds one job-take and one job-stop poll open (20 s each).",
    "",
    "| build | idle worker: requests/s | jobs done | seconds | jobs/s |",
    "|---|---:|---:|---:|---:|",
  );
  for (const run of w.runs) {
    if (run.error) lines.push(`| ${run.label} | did not run: ${run.error} | | | |`);
    else lines.push(`| ${run.label} | ${n2(run.idleRequestsPerSecond)} | ${n0(run.completed)} of ${n0(run.jobs)} | ${run.seconds.toFixed(1)} | ${n0(run.jobsPerSecond)} |`);
  }
  lines.push("");
  return lines;
}
