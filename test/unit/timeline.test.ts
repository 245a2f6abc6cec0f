import { describe, expect, it } from "vitest";
import { JobNotifier } from "../../src/domain/notifier.js";
import type { ObservabilityStore } from "../../src/domain/observability.js";
import { LOGS_KEPT, recordTimelines } from "../../src/domain/timeline.js";
import { openDb } from "../../src/store/db.js";
import { SqliteObservabilityStore } from "../../src/store/observability-store.js";

describe("timelines", () => {
  it("record transitions (not progress or chunks), a turn's events of a job in one row, and trim the logs as they grow", () => {
    const db = openDb(":memory:");
    const store = new SqliteObservabilityStore(db);
    const trims: unknown[] = [];
    const spy = new Proxy(store, { get: (t, k) => (k === "trimLogs" ? (keep: unknown) => (trims.push(keep), t.trimLogs(keep as never)) : Reflect.get(t, k)) }) as ObservabilityStore;
    const notifier = new JobNotifier();
    recordTimelines(notifier, spy);
    const emit = (id: string, cause: string, at: number) => notifier.emit({ id, endpointId: "ep", job: undefined, from: "IN_QUEUE", cause, at });
    emit("a", "started on worker w", 1);
    emit("a", "progress", 2);
    emit("a", "streamed 2 chunk(s)", 3);
    emit("a", "handler returned", 4);
    expect(store.events("a").map((e) => [e.at, e.cause])).toEqual([[1, "started on worker w"], [4, "handler returned"]]);
    expect(db.prepare("SELECT COUNT(*) AS n FROM job_timeline").get()).toEqual({ n: 1 });
    for (let i = 0; i < 5_000; i++) emit(`j${i}`, "submitted", i);
    expect(trims).toEqual([LOGS_KEPT]);
  });
});
