import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as turn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { JobNotifier } from "../../src/domain/notifier.js";
import type { ObservabilityStore } from "../../src/domain/observability.js";
import { LOGS_KEPT, recordTimelines } from "../../src/domain/timeline.js";
import { openDb } from "../../src/store/db.js";
import { HELD_TIMELINES, SqliteObservabilityStore } from "../../src/store/observability-store.js";
import { WriteBehind } from "../../src/store/write-behind.js";

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

describe("timeline rows are written behind", () => {
  const event = (jobId: string, at: number, cause = "handler returned") => ({ jobId, endpointId: "ep", at, from: "IN_PROGRESS" as const, to: "COMPLETED" as const, cause });
  const rows = (db: ReturnType<typeof openDb>, jobId?: string) =>
    (jobId === undefined ? db.prepare("SELECT COUNT(*) AS n FROM job_timeline").get() : db.prepare("SELECT COUNT(*) AS n FROM job_timeline WHERE job_id = ?").get(jobId)) as { n: number };

  it("in a database in memory: held across turns, a job's events in one row, written when its timeline is read", async () => {
    const db = openDb(":memory:");
    const writes = new WriteBehind(db);
    const store = new SqliteObservabilityStore(db, writes);
    store.appendEvent(event("a", 1, "submitted"));
    await turn();
    store.appendEvent(event("b", 2, "submitted"));
    store.appendEvent(event("a", 3, "started on worker w"));
    await turn();
    writes.flush();
    expect(rows(db).n).toBe(0);
    expect(store.events("a").map((e) => [e.at, e.cause])).toEqual([
      [1, "submitted"],
      [3, "started on worker w"],
    ]);
    expect(rows(db, "a").n).toBe(1);
    expect(store.events("b").map((e) => e.at)).toEqual([2]);
  });

  it(`in a database in memory: written at the end of the turn once ${HELD_TIMELINES} jobs have events waiting, and by a flush of everything`, async () => {
    const db = openDb(":memory:");
    const writes = new WriteBehind(db);
    const store = new SqliteObservabilityStore(db, writes);
    for (let i = 0; i < HELD_TIMELINES - 1; i++) store.appendEvent(event(`j${i}`, i));
    await turn();
    expect(rows(db).n).toBe(0);
    store.appendEvent(event("last", 0));
    await turn();
    expect(rows(db).n).toBe(HELD_TIMELINES);
    store.appendEvent(event("after", 1));
    writes.flush(true);
    expect(rows(db, "after").n).toBe(1);
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
