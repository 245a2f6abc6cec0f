import { benchConfig, ECHO } from "../lib/config.js";
import { call, waitForHealth } from "../lib/http.js";
import { submitMany } from "../lib/load.js";
import { memoryOf, startMinipod } from "../lib/processes.js";

export interface LifecycleResult {
  jobs: number;
  accepted: number;
  errors: number;
  /** Wall seconds from the first /run to /health counting every job COMPLETED. */
  seconds: number;
  jobsPerSecond: number;
  /** Wall ms of the 31-minute advance that ends the result retention of every job. */
  sweepMs: number;
  completedAfterSweep: number;
  peakRssBytes: number | undefined;
}

const RETENTION_PLUS = 31 * 60 * 1000;

/**
 * End to end on the manual clock: `jobs` /run over HTTP (16 connections), echo workers complete
 * them, then one advance past the 30-minute result retention removes them all. Peak RSS is the
 * process's high-water mark (VmHWM) at the end.
 */
export async function lifecycle(jobs: number, log: (line: string) => void): Promise<LifecycleResult> {
  const server = await startMinipod({ config: await benchConfig([ECHO]), clock: "manual" });
  try {
    log(`lifecycle: submitting ${jobs} jobs`);
    const started = performance.now();
    const sent = await submitMany(server.url, "/v2/echo/run", JSON.stringify({ input: { prompt: "hello", n: 1 } }), jobs, 300);
    await waitForHealth(server.url, "echo", (h) => h.jobs.completed + h.jobs.failed >= sent.ok && h.jobs.inQueue === 0 && h.jobs.inProgress === 0, 300_000);
    const seconds = (performance.now() - started) / 1000;
    log("lifecycle: advancing past the result retention");
    const t = performance.now();
    const adv = await call(server.url, "POST", "/_emulator/clock/advance", { ms: RETENTION_PLUS }, 300_000);
    if (adv.status !== 200) throw new Error(`advance answered ${adv.status}: ${JSON.stringify(adv.body)}`);
    const sweepMs = performance.now() - t;
    const after = await call(server.url, "GET", "/v2/echo/health");
    return {
      jobs,
      accepted: sent.ok,
      errors: sent.errors,
      seconds,
      jobsPerSecond: sent.ok / seconds,
      sweepMs,
      completedAfterSweep: after.body.jobs.completed as number,
      peakRssBytes: memoryOf(server.child.pid!)?.peak,
    };
  } finally {
    await server.stop();
  }
}
