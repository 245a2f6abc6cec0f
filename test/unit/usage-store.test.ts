import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as turn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { openDb, type Db } from "../../src/store/db.js";
import { SqliteUsageStore } from "../../src/store/usage-store.js";
import { WriteBehind } from "../../src/store/write-behind.js";

describe("usage store: a worker's last-seen time is written behind", () => {
  const opened: Db[] = [];
  const dirs: string[] = [];
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const setUp = (file: string) => {
    const db = openDb(file);
    opened.push(db);
    const writes = new WriteBehind(db);
    const store = new SqliteUsageStore(db, writes);
    const id = store.open("worker", "w1", { endpointId: "e" }, 1_000);
    const seenInRow = () => (db.prepare(`SELECT seen_at FROM usage_intervals WHERE id = ?`).get(id) as { seen_at: number }).seen_at;
    return { writes, store, id, seenInRow };
  };

  it("in a database in memory: the latest time is held until the intervals are read, then written once", async () => {
    const { store, id, seenInRow } = setUp(":memory:");
    store.seen(id, 2_000);
    store.seen(id, 3_000);
    await turn();
    expect(seenInRow()).toBe(1_000);
    // Every statement of the store sees it: a read, and closing at the last-seen time.
    expect(store.openFor("worker", "w1")?.seenAt).toBe(3_000);
    expect(seenInRow()).toBe(3_000);
    store.seen(id, 4_000);
    expect(store.closeOpenAtSeen("worker")).toBe(1);
    expect(store.overlapping("worker", 0, 10_000)).toMatchObject([{ id, seenAt: 4_000, stoppedAt: 4_000 }]);
  });

  it("in a database in memory: a snapshot or export (a flush of everything) writes it", () => {
    const { writes, store, id, seenInRow } = setUp(":memory:");
    store.seen(id, 5_000);
    writes.flush();
    expect(seenInRow()).toBe(1_000);
    writes.flush(true);
    expect(seenInRow()).toBe(5_000);
  });

  it("in a database file: it is committed at the end of the turn, as a crash would need it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-usage-"));
    dirs.push(dir);
    const { store, id, seenInRow } = setUp(join(dir, "state.db"));
    store.seen(id, 2_000);
    expect(seenInRow()).toBe(1_000);
    await turn();
    expect(seenInRow()).toBe(2_000);
  });

  it("forgets held times when every interval is deleted", () => {
    const { writes, store, id } = setUp(":memory:");
    store.seen(id, 2_000);
    store.deleteAll();
    expect(() => writes.flush(true)).not.toThrow();
    expect(store.overlapping("worker", 0, 10_000)).toEqual([]);
  });
});
