import { VirtualClock } from "../../src/domain/clock.js";
import { Deadlines } from "../../src/domain/deadlines.js";
import type { Job } from "../../src/domain/job.js";
import { JobNotifier, type JobChange } from "../../src/domain/notifier.js";
import { Transitions } from "../../src/domain/transitions.js";
import { openDb } from "../../src/store/db.js";
import { SqliteJobStore } from "../../src/store/job-store.js";
import { ProcessWall } from "../../src/compose/process-wall.js";

/**
 * A job store and the only writer of job state, as the core wires them, on a manual clock at
 * 10,000, with every change announced kept (`changes`) and their causes.
 */
export function jobWorld() {
  const clock = new VirtualClock({ mode: "manual", start: 10_000, wall: new ProcessWall(() => {}) });
  const jobs = new SqliteJobStore(openDb(":memory:"));
  const notifier = new JobNotifier();
  const changes: JobChange[] = [];
  notifier.onAny((c) => changes.push(c));
  const transitions = new Transitions(clock, jobs, new Deadlines(clock, jobs, () => {}), notifier);
  return { clock, jobs, transitions, changes, causes: () => changes.map((c) => c.cause) };
}

/** A job as the store holds it once queued: every field, with `over` replacing some. */
export const queuedJob = (id: string, over: Partial<Job> = {}): Job => ({
  id,
  endpointId: "ep",
  kind: "run",
  status: "IN_QUEUE",
  input: { prompt: "hi" },
  output: undefined,
  error: undefined,
  webhook: undefined,
  s3Config: undefined,
  executionTimeoutMs: 600_000,
  ttlMs: 86_400_000,
  lowPriority: false,
  createdAt: 1000,
  queuedAt: 1000,
  startedAt: undefined,
  completedAt: undefined,
  workerId: undefined,
  retries: 0,
  attempt: 0,
  queueSeq: 1,
  expiresAt: 86_401_000,
  timeoutAt: undefined,
  retainUntil: undefined,
  streamCursor: 0,
  ...over,
});
