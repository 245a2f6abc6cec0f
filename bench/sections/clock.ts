import { benchConfig } from "../lib/config.js";
import { call, pool } from "../lib/http.js";
import { startMinipod } from "../lib/processes.js";

export interface ClockResult {
  jobs: number;
  /** The median of `runsMs`. */
  advanceMs: number;
  /** Each run's advance, in the order they ran (a fresh emulator each). */
  runsMs: number[];
  /** Timers pending before and after, and the endpoint's health after the advance. */
  timersBefore: number;
  timersAfter: number;
  healthAfter: unknown;
}

const DAY = 24 * 60 * 60 * 1000;
const SLOW = { id: "slow", handler: "scripted", workersMin: 0, workersMax: 20, coldStartMs: 1000, idleTimeout: 60 };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * `jobs` pending jobs whose handler would sleep 8 virtual days, with execution timeouts from 5 s
 * to ~2 h and ttls from 10 s to 7 days, on 20 workers: one advance of 7 days makes workers start,
 * time out, scale down and every ttl expire on the way. Measures the wall time of that advance,
 * `runs` times on a fresh emulator each (one advance is a single second of a shared machine, as
 * noisy as one cold start), and reports the median with every run.
 */
export async function clockAdvance(jobs: number, runs: number, log: (line: string) => void): Promise<ClockResult> {
  const results: Array<Omit<ClockResult, "runsMs">> = [];
  for (let run = 1; run <= runs; run++) {
    log(`clock: run ${run}/${runs}`);
    results.push(await oneAdvance(jobs, log));
  }
  const runsMs = results.map((r) => r.advanceMs);
  // The other figures (timers, health) are the same in every run; those of the last are shown.
  return { ...results.at(-1)!, advanceMs: median(runsMs), runsMs };
}

async function oneAdvance(jobs: number, log: (line: string) => void): Promise<Omit<ClockResult, "runsMs">> {
  const server = await startMinipod({ config: await benchConfig([SLOW]), clock: "manual" });
  try {
    log(`clock: submitting ${jobs} jobs`);
    await pool(jobs, 16, async (i) => {
      const policy = { executionTimeout: 5000 + (i % 120) * 60_000, ttl: 10_000 + ((i * 7919) % (7 * DAY - 10_000)) };
      const r = await call(server.url, "POST", "/v2/slow/run", { input: { sleepMs: 8 * DAY, i }, policy });
      if (r.status !== 200) throw new Error(`/run answered ${r.status}: ${JSON.stringify(r.body)}`);
    });
    const before = await call(server.url, "GET", "/_emulator/clock");
    log("clock: advancing 7 days");
    const t = performance.now();
    const adv = await call(server.url, "POST", "/_emulator/clock/advance", { ms: 7 * DAY }, 120_000);
    const advanceMs = performance.now() - t;
    if (adv.status !== 200) throw new Error(`advance answered ${adv.status}: ${JSON.stringify(adv.body)}`);
    const health = await call(server.url, "GET", "/v2/slow/health");
    return { jobs, advanceMs, timersBefore: before.body.pendingTimers, timersAfter: adv.body.pendingTimers, healthAfter: health.body };
  } finally {
    await server.stop();
  }
}
