import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/domain/clock.js";
import { Deadlines } from "../../src/domain/deadlines.js";
import { JobNotifier, type JobChange } from "../../src/domain/notifier.js";
import { Transitions } from "../../src/domain/transitions.js";
import { openDb } from "../../src/store/db.js";
import { SqliteJobStore } from "../../src/store/job-store.js";
import { queuedJob } from "../support/jobs.js";

describe("the timeline's times", () => {
  it("a submission is announced at the job's createdAt, even when the clock has moved on since (the real clock between two readings)", () => {
    const clock = new VirtualClock({ mode: "manual", start: 10_000 });
    const jobs = new SqliteJobStore(openDb(":memory:"));
    const notifier = new JobNotifier();
    const changes: JobChange[] = [];
    notifier.onAny((c) => changes.push(c));
    const transitions = new Transitions(clock, jobs, new Deadlines(clock, jobs, () => {}), notifier);
    // The job was made at 9,999: a millisecond before this reading of the clock.
    const job = queuedJob("job-1", { endpointId: "ep", createdAt: 9_999, queuedAt: 9_999, expiresAt: 19_999 });
    transitions.insert(job, "submitted with /run");
    expect(changes.map((c) => [c.cause, c.at])).toEqual([["submitted with /run", 9_999]]);
    // Its ttl, from the same createdAt, then ends exactly ttl after the submission the timeline shows.
    expect(job.expiresAt - changes[0]!.at).toBe(10_000);
  });
});
