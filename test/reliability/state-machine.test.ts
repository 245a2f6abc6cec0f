import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canMove, isFinal, TRANSITIONS, type JobStatus } from "../../src/domain/job.js";
import { RETENTION_RUN_MS, TTL_DEFAULT_MS } from "../../src/domain/limits.js";
import type { JobChange } from "../../src/domain/notifier.js";
import { inProcess } from "../support/in-process.js";

const START = Date.parse("2026-01-01T00:00:00Z");
const ENDPOINTS = ["fast", "slow"] as const;
type Ep = (typeof ENDPOINTS)[number];
const CONFIG = {
  rateLimits: { enabled: false },
  endpoints: [
    { id: "fast", handler: "scripted", workersMin: 1, workersMax: 2, coldStartMs: 1000, idleTimeout: 5 },
    { id: "slow", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 5000, idleTimeout: 5 },
  ],
};

type Command =
  | { t: "submit"; ep: Ep; sleepMs: number; fail: boolean; ttl?: number; timeout?: number }
  | { t: "cancel"; i: number }
  | { t: "retry"; i: number }
  | { t: "purge"; ep: Ep }
  | { t: "status"; i: number }
  | { t: "advance"; ms: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        t: fc.constant("submit" as const),
        ep: fc.constantFrom(...ENDPOINTS),
        sleepMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 120_000 })),
        fail: fc.boolean(),
        ttl: fc.integer({ min: 10_000, max: 3 * 3_600_000 }),
        timeout: fc.integer({ min: 5_000, max: 600_000 }),
      },
      { requiredKeys: ["t", "ep", "sleepMs", "fail"] },
    ),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("cancel" as const), i: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("retry" as const), i: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("purge" as const), ep: fc.constantFrom(...ENDPOINTS) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("status" as const), i: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant("advance" as const), ms: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 40 * 60_000 }), fc.constant(TTL_DEFAULT_MS)) }) },
);

interface Known {
  index: number;
  id: string;
  ep: Ep;
  expiresAt: number;
  status: JobStatus;
  finishedAt: number | undefined;
  deleted: string | undefined;
}

/**
 * Runs `commands` against a fresh in-process emulator on the manual clock, checking after every
 * step that /health matches the jobs' own states, that every job still alive answers /status and
 * every deleted one answers 404, and (as each change happens) that every transition is one of
 * TRANSITIONS and every deletion is due (ttl, result retention, or a purge of a queued job).
 * Returns the history with job ids replaced by submission order and worker ids removed.
 */
async function play(commands: Command[]): Promise<string[]> {
  const e = await inProcess({ config: CONFIG, clock: { mode: "manual", start: START } });
  const jobs: Known[] = [];
  const byId = new Map<string, Known>();
  const history: string[] = [];
  const problems: string[] = [];
  let purging: Ep | undefined;
  const unsubscribe = e.core.notifier.onAny((c: JobChange) => {
    if (!byId.has(c.id) && c.from === undefined && c.job) {
      // A submission: known from its first event, so moves made during the /run itself are checked too.
      const k: Known = { index: jobs.length, id: c.id, ep: c.endpointId as Ep, expiresAt: c.job.expiresAt, status: c.job.status, finishedAt: undefined, deleted: undefined };
      jobs.push(k);
      byId.set(c.id, k);
      if (c.job.status !== "IN_QUEUE") problems.push(`job #${k.index} was created ${c.job.status}, not IN_QUEUE`);
    }
    const k = byId.get(c.id);
    const label = `${k ? `#${k.index}` : "?"} ${c.from ?? "-"}>${c.job?.status ?? "gone"} ${c.cause.replace(/\b[a-z0-9]{14}\b/g, "w")} +${c.at - START}`;
    history.push(label);
    if (!k) return problems.push(`change of a job never submitted: ${label}`) && undefined;
    if (c.job) {
      if (c.from !== undefined && c.from !== c.job.status && !canMove(c.from, c.job.status)) problems.push(`forbidden transition ${label}; allowed from ${c.from}: ${TRANSITIONS[c.from].join(", ")}`);
      if (c.job.status !== k.status && isFinal(c.job.status)) k.finishedAt = c.at;
      if (c.job.status === "IN_QUEUE" && k.status !== "IN_QUEUE") k.finishedAt = undefined;
      k.status = c.job.status;
      k.expiresAt = c.job.expiresAt;
    } else {
      k.deleted = c.cause;
      const dueByTtl = /ttl/.test(c.cause) && c.at >= k.expiresAt;
      const dueByRetention = /retention/.test(c.cause) && k.finishedAt !== undefined && c.at >= k.finishedAt + RETENTION_RUN_MS;
      const purged = c.cause === "purged" && c.from === "IN_QUEUE" && purging === k.ep;
      if (!dueByTtl && !dueByRetention && !purged)
        problems.push(`job deleted before its time: ${label} (expires +${k.expiresAt - START}, finished ${k.finishedAt === undefined ? "never" : `+${k.finishedAt - START}`})`);
    }
  });
  const pick = (i: number) => jobs[i % Math.max(1, jobs.length)];
  try {
    for (const cmd of commands) {
      switch (cmd.t) {
        case "submit": {
          const policy = { ...(cmd.ttl ? { ttl: cmd.ttl } : {}), ...(cmd.timeout ? { executionTimeout: cmd.timeout } : {}) };
          const before = jobs.length;
          const res = await e.post(`/v2/${cmd.ep}/run`, { input: { sleepMs: cmd.sleepMs, ...(cmd.fail ? { fail: "planned" } : {}) }, policy });
          expect(res.status).toBe(200);
          expect(jobs.length).toBe(before + 1);
          expect(jobs[before]!.id).toBe(res.body.id);
          break;
        }
        case "cancel":
        case "retry": {
          const k = pick(cmd.i);
          if (!k) break;
          const retryable = k.status === "FAILED" || k.status === "TIMED_OUT";
          const res = await e.post(`/v2/${k.ep}/${cmd.t}/${k.id}`);
          expect(res.status, `${cmd.t} of job #${k.index} (${k.deleted ? "deleted" : k.status})`).toBe(k.deleted ? 404 : cmd.t === "retry" && !retryable ? 400 : 200);
          break;
        }
        case "purge": {
          purging = cmd.ep;
          const res = await e.post(`/v2/${cmd.ep}/purge-queue`);
          purging = undefined;
          expect(res.status).toBe(200);
          break;
        }
        case "status": {
          const k = pick(cmd.i);
          if (k) expect((await e.get(`/v2/${k.ep}/status/${k.id}`)).status).toBe(k.deleted ? 404 : 200);
          break;
        }
        case "advance":
          await e.advance(cmd.ms);
          break;
      }
      expect(problems).toEqual([]);
      await checkConsistency(e, jobs);
    }
  } finally {
    unsubscribe();
    e.close();
  }
  return history;
}

async function checkConsistency(e: Awaited<ReturnType<typeof inProcess>>, jobs: Known[]): Promise<void> {
  for (const ep of ENDPOINTS) {
    const seen: Record<string, number> = {};
    let retried = 0;
    for (const k of jobs.filter((j) => j.ep === ep)) {
      const res = await e.get(`/v2/${ep}/status/${k.id}`);
      if (k.deleted) {
        expect(res.status, `job #${k.index} was deleted (${k.deleted})`).toBe(404);
        continue;
      }
      expect(res.status, `job #${k.index} should still be there (status ${k.status})`).toBe(200);
      expect(res.body.status).toBe(k.status);
      seen[res.body.status] = (seen[res.body.status] ?? 0) + 1;
      retried += res.body.retries ?? 0;
    }
    const health = (await e.get(`/v2/${ep}/health`)).body;
    expect(health.jobs, `/health of ${ep}`).toEqual({
      completed: seen.COMPLETED ?? 0,
      failed: seen.FAILED ?? 0,
      inProgress: seen.IN_PROGRESS ?? 0,
      inQueue: seen.IN_QUEUE ?? 0,
      retried,
    });
  }
}

describe("the job state machine under random operations", () => {
  it("keeps /health, transitions, retention and ttl consistent, and replays the same history from the same commands", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 40 }), async (commands) => {
        const first = await play(commands);
        const second = await play(commands);
        expect(second).toEqual(first);
      }),
      { numRuns: Number(process.env.STATE_RUNS ?? 25), interruptAfterTimeLimit: 20_000 },
    );
  });
});
