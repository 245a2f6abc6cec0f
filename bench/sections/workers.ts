import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call } from "../lib/http.js";
import { BENCH, ROOT, startMinipod } from "../lib/processes.js";

const PYTHON = "/usr/bin/python3";
/** The service's library as a user has it (installed, PYTHONPATH), or from $MINIPOD_CLIENTS, with the stand-ins kept beside the repository. */
const PYTHONPATH = [
  process.env.PYTHONPATH,
  process.env.MINIPOD_CLIENTS && join(process.env.MINIPOD_CLIENTS, "runpod-python"),
  process.env.MINIPOD_STUBS ?? join(ROOT, "../shared/clients/python/stubs"),
]
  .filter(Boolean)
  .join(":");
const ENDPOINT = "py";

/** One build measured: jobs through the real worker runtime, and what idle workers send. */
export interface WorkersRun {
  label: string;
  /** Wall seconds the idle workers were watched. */
  idleSeconds: number;
  /** Requests per second one idle worker sent (job-take, job-stop, ping, ...). */
  idleRequestsPerSecond: number;
  jobs: number;
  completed: number;
  /** Wall seconds from the first /run to the last job done, or to the time limit. */
  seconds: number;
  jobsPerSecond: number;
  error?: string;
}

export interface WorkersResult {
  workers: number;
  concurrency: number;
  runs: WorkersRun[];
  pythonError?: string;
}

/** The worker environment: the platform's form (job id in the path), or the query form older READMEs gave. */
function workerEnv(url: string, workerId: string, form: "platform" | "query"): Record<string, string> {
  const ep = `${url}/v2/${ENDPOINT}`;
  const urls =
    form === "platform"
      ? { out: `${ep}/job-done/$RUNPOD_POD_ID/$ID?gpu=bench`, stream: `${ep}/job-stream/$RUNPOD_POD_ID/$ID?gpu=bench` }
      : { out: `${ep}/job-done/$RUNPOD_POD_ID?jobId=$ID&isStream=false`, stream: `${ep}/job-stream/$RUNPOD_POD_ID?jobId=$ID&isStream=true` };
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    PYTHONPATH,
    PYTHONDONTWRITEBYTECODE: "1",
    HOME: mkdtempSync(join(tmpdir(), "minipod-bench-home-")),
    RUNPOD_LOG_LEVEL: "ERROR",
    RUNPOD_WEBHOOK_GET_JOB: `${ep}/job-take/$ID?gpu=bench`,
    RUNPOD_WEBHOOK_POST_OUTPUT: urls.out,
    RUNPOD_WEBHOOK_POST_STREAM: urls.stream,
    RUNPOD_WEBHOOK_PING: `${ep}/ping/$RUNPOD_POD_ID`,
    RUNPOD_AI_API_KEY: "bench-key",
    RUNPOD_POD_ID: workerId,
    RUNPOD_ENDPOINT_ID: ENDPOINT,
    RUNPOD_PING_INTERVAL: "10000",
    RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: "true",
    RUNPOD_SKIP_GPU_CHECK: "true",
  };
}

const journalCount = async (url: string) => ((await call(url, "GET", `/_emulator/requests?endpoint=${ENDPOINT}&limit=1`)).body as { count: number }).count;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One build: `workers` Python processes of the service's worker runtime (an echo handler,
 * `concurrency` jobs at a time) on an external endpoint of a real-clock minipod. First the idle
 * workers are watched for `idleSeconds` (requests counted in the journal), then `jobs` jobs are
 * submitted and timed until every one is done or `limitSeconds` pass.
 */
async function measure(
  o: { label: string; bin?: string; form: "platform" | "query"; workers: number; concurrency: number; jobs: number; idleSeconds: number; limitSeconds: number },
  log: (line: string) => void,
): Promise<WorkersRun> {
  const config = { logLevel: "warn", endpoints: [{ id: ENDPOINT, handler: "external" }], rateLimits: { enabled: false }, journal: { maxEntries: 1_000_000 } };
  const server = await startMinipod({ config, ...(o.bin ? { bin: o.bin } : {}) });
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < o.workers; i++) {
      const child = spawn(PYTHON, [join(BENCH, "workers/echo.py")], {
        env: { ...workerEnv(server.url, `bench-${i + 1}`, o.form), BENCH_CONCURRENCY: String(o.concurrency) },
        stdio: ["ignore", "ignore", "ignore"],
        detached: true,
      });
      children.push(child);
    }
    // Up once each has asked for work.
    for (let i = 0; i < 300; i++) {
      const seen = ((await call(server.url, "GET", `/_emulator/requests?endpoint=${ENDPOINT}&operation=job-take&limit=500`)).body as { requests: Array<{ path: string }> }).requests;
      if (new Set(seen.map((r) => r.path)).size >= o.workers) break;
      await sleep(100);
    }
    log(`workers (${o.label}): ${o.workers} idle worker(s) for ${o.idleSeconds} s`);
    const before = await journalCount(server.url);
    await sleep(o.idleSeconds * 1000);
    const idle = (await journalCount(server.url)) - before;

    log(`workers (${o.label}): ${o.jobs} jobs`);
    const started = performance.now();
    for (let sent = 0; sent < o.jobs; ) {
      const batch = Array.from({ length: Math.min(50, o.jobs - sent) }, () => call(server.url, "POST", `/v2/${ENDPOINT}/run`, { input: { n: sent } }));
      sent += batch.length;
      await Promise.all(batch);
    }
    let completed = 0;
    const deadline = started + o.limitSeconds * 1000;
    for (;;) {
      const h = (await call(server.url, "GET", `/v2/${ENDPOINT}/health`)).body as { jobs: { completed: number; failed: number } };
      completed = h.jobs.completed;
      if (h.jobs.completed + h.jobs.failed >= o.jobs || performance.now() > deadline) break;
      await sleep(50);
    }
    const seconds = (Math.min(performance.now(), deadline) - started) / 1000;
    return { label: o.label, idleSeconds: o.idleSeconds, idleRequestsPerSecond: idle / o.idleSeconds / o.workers, jobs: o.jobs, completed, seconds, jobsPerSecond: completed / seconds };
  } finally {
    for (const c of children) {
      try {
        process.kill(-c.pid!, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await server.stop();
  }
}

/**
 * Jobs per second through the service's own Python worker runtime, and what an idle worker sends,
 * for this build and (`baselineBin`) an earlier one, side by side.
 */
export async function workersBench(o: { baseline?: { ref: string; bin: string } | undefined; quick: boolean }, log: (line: string) => void): Promise<WorkersResult> {
  const workers = 4;
  const concurrency = 32;
  const py = spawnSync(PYTHON, ["-c", "import runpod.serverless"], { env: { PATH: process.env.PATH ?? "", PYTHONPATH }, encoding: "utf8" });
  if (py.status !== 0) return { workers, concurrency, runs: [], pythonError: (py.error?.message ?? py.stderr.trim().split("\n").slice(-1)[0]) || "python3 failed" };
  const shape = { workers, concurrency, jobs: o.quick ? 400 : 2000, idleSeconds: o.quick ? 3 : 25 };
  const runs: WorkersRun[] = [];
  if (o.baseline) {
    try {
      runs.push(await measure({ ...shape, label: `before (${o.baseline.ref})`, bin: o.baseline.bin, form: "query", limitSeconds: 20 }, log));
    } catch (e) {
      runs.push({ label: `before (${o.baseline.ref})`, idleSeconds: 0, idleRequestsPerSecond: NaN, jobs: 0, completed: 0, seconds: 0, jobsPerSecond: NaN, error: (e as Error).message });
    }
  }
  runs.push(await measure({ ...shape, label: "after (this build)", form: "platform", limitSeconds: 300 }, log));
  return { workers, concurrency, runs };
}
