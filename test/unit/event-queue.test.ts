import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../src/domain/observability.js";
import { EventQueue } from "../../src/store/event-queue.js";
import { JOB_STATUSES } from "../../src/domain/job.js";
import { pushAndDrop } from "./ring-script.js";

const status = (n: number) => (n % 7 === 0 ? undefined : JOB_STATUSES[n % JOB_STATUSES.length]);
const event = (n: number): JobEvent => ({ jobId: `j${n % 37}`, endpointId: `ep${n % 3}`, at: 1_790_000_000_000 + n * 0.5, from: status(n), to: status(n + 3), cause: `cause ${n}` });

describe("EventQueue", () => {
  it("keeps every event as pushed, oldest first, across growth, wrap-around and drops", () => {
    const q = new EventQueue();
    const { oldest, next } = pushAndDrop(q, (n) => q.push(event(n)));
    const kept = Array.from({ length: next - oldest }, (_, k) => event(oldest + k));
    for (const id of ["j0", "j5", "j36", "nobody"]) expect(q.ofJob(id)).toEqual(kept.filter((e) => e.jobId === id));

    const rows = q.takeRows();
    expect(q.length).toBe(0);
    // One row per job, in the order jobs first appear, with each job's events in order.
    const firsts = [...new Set(kept.map((e) => e.jobId))];
    expect(rows.map((r) => r.jobId)).toEqual(firsts);
    for (const row of rows) {
      const mine = kept.filter((e) => e.jobId === row.jobId);
      expect(row.endpointId).toBe(mine[0]!.endpointId);
      expect(row.events).toEqual(mine.map((e) => [e.at, e.from ?? null, e.to ?? null, e.cause]));
    }
    expect(q.takeRows()).toEqual([]);
  });

  it("lets go of what it dropped or gave away", () => {
    const q = new EventQueue();
    q.push(event(1));
    q.dropOldest(5); // more than there are
    expect(q.length).toBe(0);
    expect(q.ofJob("j1")).toEqual([]);
    q.push(event(2));
    q.clear();
    expect(q.takeRows()).toEqual([]);
  });
});
