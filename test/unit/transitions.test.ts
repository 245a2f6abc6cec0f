import { describe, expect, it } from "vitest";
import { jobWorld, queuedJob } from "../support/jobs.js";

describe("the timeline's times", () => {
  it("a submission is announced at the job's createdAt, even when the clock has moved on since (the real clock between two readings)", () => {
    const { transitions, changes } = jobWorld();
    // The clock reads 10,000; the job was made at 9,999, a millisecond before.
    const job = queuedJob("job-1", { endpointId: "ep", createdAt: 9_999, queuedAt: 9_999, expiresAt: 19_999 });
    transitions.insert(job, "submitted with /run");
    expect(changes.map((c) => [c.cause, c.at])).toEqual([["submitted with /run", 9_999]]);
    // Its ttl, from the same createdAt, then ends exactly ttl after the submission the timeline shows.
    expect(job.expiresAt - changes[0]!.at).toBe(10_000);
  });
});
