import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as turn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { JobNotifier } from "../../src/domain/notifier.js";
import type { ObservabilityStore } from "../../src/domain/observability.js";
import { LOGS_KEPT, recordTimelines } from "../../src/domain/timeline.js";
import { openDb } from "../../src/store/db.js";
import { SqliteObservabilityStore } from "../../src/store/observability-store.js";
import { WriteBehind } from "../../src/store/write-behind.js";

describe("timelines", () => {
  it("record transitions (not progress or chunks), a job's events written together in one row, and trim the logs as they grow", () => {
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
    store.flush();
    expect(db.prepare("SELECT COUNT(*) AS n FROM job_timeline").get()).toEqual({ n: 1 });
    for (let i = 0; i < 5_000; i++) emit(`j${i}`, "submitted", i);
    expect(trims).toEqual([LOGS_KEPT]);
  });
});

describe("timeline rows are written behind", () => {
  const event = (jobId: string, at: number, cause = "handler returned") => ({ jobId, endpointId: "ep", at, from: "IN_PROGRESS" as const, to: "COMPLETED" as const, cause });
  const rows = (db: ReturnType<typeof openDb>, jobId?: string) =>
    (jobId === undefined ? db.prepare("SELECT COUNT(*) AS n FROM job_timeline").get() : db.prepare("SELECT COUNT(*) AS n FROM job_timeline WHERE job_id = ?").get(jobId)) as { n: number };

  it("in a database in memory: held across turns and read without being written", async () => {
    const db = openDb(":memory:");
    const writes = new WriteBehind(db);
    const store = new SqliteObservabilityStore(db, writes);
    store.appendEvent(event("a", 1, "submitted"));
    await turn();
    store.appendEvent(event("b", 2, "submitted"));
    store.appendEvent(event("a", 3, "started on worker w"));
    await turn();
    writes.flush();
    expect(store.events("a").map((e) => [e.at, e.from, e.to, e.cause])).toEqual([
      [1, "IN_PROGRESS", "COMPLETED", "submitted"],
      [3, "IN_PROGRESS", "COMPLETED", "started on worker w"],
    ]);
    expect(store.events("b").map((e) => e.at)).toEqual([2]);
    expect(store.events("nobody")).toEqual([]);
    expect(rows(db).n).toBe(0);
  });

  it("in a database in memory: written by a flush of everything, a job's waiting events in one row; read after the rows written before", async () => {
    const db = openDb(":memory:");
    const writes = new WriteBehind(db);
    const store = new SqliteObservabilityStore(db, writes);
    for (let i = 0; i < 5_000; i++) store.appendEvent(event(`j${i % 1_000}`, i));
    await turn();
    expect(rows(db).n).toBe(0);
    writes.flush(true);
    expect(rows(db).n).toBe(1_000);
    expect(rows(db, "j7").n).toBe(1);
    store.appendEvent({ jobId: "j7", endpointId: "ep", at: 9_000, from: "COMPLETED", to: undefined, cause: "result retention ended" });
    const j7 = store.events("j7");
    expect(j7.map((e) => e.at)).toEqual([7, 1_007, 2_007, 3_007, 4_007, 9_000]);
    expect(j7.at(-1)).toEqual({ jobId: "j7", endpointId: "ep", at: 9_000, from: "COMPLETED", to: undefined, cause: "result retention ended" });
    expect(rows(db).n).toBe(1_000);
  });

  it("in a database in memory: trimming drops the oldest events waiting, and keeps the newest rows written", () => {
    const db = openDb(":memory:");
    const writes = new WriteBehind(db);
    const store = new SqliteObservabilityStore(db, writes);
    for (let i = 0; i < 3; i++) store.appendEvent(event(`old${i}`, i));
    writes.flush(true);
    for (let i = 0; i < 10; i++) store.appendEvent(event(`new${i}`, 10 + i));
    store.trimLogs({ timelineRows: 2, timelineEvents: 4, deliveries: 10 });
    expect(store.events("new5")).toEqual([]);
    expect(store.events("new6").map((e) => e.at)).toEqual([16]);
    expect(store.events("old0")).toEqual([]);
    expect(store.events("old2").map((e) => e.at)).toEqual([2]);
    writes.flush(true);
    expect(db.prepare("SELECT job_id FROM job_timeline ORDER BY seq").all()).toEqual(["old1", "old2", "new6", "new7", "new8", "new9"].map((job_id) => ({ job_id })));
  });

  it("in a database file: committed at the end of the turn", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-timeline-"));
    const db = openDb(join(dir, "state.db"));
    try {
      const store = new SqliteObservabilityStore(db, new WriteBehind(db));
      store.appendEvent(event("a", 1));
      expect(rows(db).n).toBe(0);
      await turn();
      expect(rows(db, "a").n).toBe(1);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
