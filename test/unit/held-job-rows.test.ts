import { afterEach, describe, expect, it, vi } from "vitest";
import type { Job } from "../../src/domain/job.js";
import { queuedJob as job } from "../support/jobs.js";
import { openDb, type Db } from "../../src/store/db.js";
import { SqliteJobStore } from "../../src/store/job-store.js";
import { WriteBehind } from "../../src/store/write-behind.js";

/** The rows in SQLite itself, read past the store (which would write what it holds first). */
const rowsIn = (db: Db) => (db.prepare("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n;

/** A store on a database in memory holding new jobs' rows, and its end of a turn (`writes.flush()`, as `setImmediate` runs it). */
const IDLE_MS = 50;
function heldStore(rows = 1_000, bytes = 1024 * 1024) {
  const db = openDb(":memory:");
  const writes = new WriteBehind(db);
  const store = new SqliteJobStore(db, writes, { rows, bytes, idleMs: IDLE_MS });
  return { db, writes, store, endOfTurn: () => writes.flush() };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("rows of new jobs held in memory (a database in memory)", () => {
  it("are not written at the end of their turn, yet read by id at once, and by every SQL reader after writing them", async () => {
    const { db, store, endOfTurn } = heldStore();
    store.insert(job("a"));
    const b = job("b", { queueSeq: 2 });
    store.insert(b);
    const done = { ...b, status: "COMPLETED" as const, output: { n: 1 }, completedAt: 2000, retainUntil: 9000, workerId: "w" };
    store.save(done, ["status", "output", "completedAt", "retainUntil", "workerId"], b);
    // The turn's answers wait for its end, which writes nothing: they leave together, without a commit.
    const answers = store.whenDurable();
    endOfTurn();
    await answers;
    expect(rowsIn(db)).toBe(0);
    expect(store.whenDurable()).toBeUndefined();
    expect(store.get("b")).toEqual(done);
    // Read by id once its copy in memory is gone: from the values held.
    (store as unknown as { recent: { clear(): void } }).recent.clear();
    expect(store.get("b")).toEqual(done);
    expect(store.list({ limit: 10, offset: 0 }).total).toBe(2);
    expect(rowsIn(db)).toBe(2);
  });

  it("keep their order when a job held changes in a later turn, and one deleted in the turn it changed is never written", () => {
    const { db, store, endOfTurn } = heldStore();
    for (const id of ["a", "b", "c", "d"]) store.insert(job(id));
    endOfTurn();
    // "a" changes (taken by a worker) a turn later: written, it still comes first.
    const a = store.get("a")!;
    store.save({ ...a, status: "IN_PROGRESS", startedAt: 1500, workerId: "w" }, ["status", "startedAt", "workerId"], a);
    const c = store.get("c")!;
    store.save({ ...c, status: "IN_PROGRESS", startedAt: 1500, workerId: "w" }, ["status", "startedAt", "workerId"], c);
    store.delete("c");
    endOfTurn();
    expect(rowsIn(db)).toBe(0);
    expect(store.get("c")).toBeUndefined();
    expect(store.list({ limit: 10, offset: 0 }).total).toBe(3);
    const order = (db.prepare("SELECT id, status FROM jobs ORDER BY rowid").all() as { id: string; status: string }[]);
    expect(order).toEqual([
      { id: "a", status: "IN_PROGRESS" },
      { id: "b", status: "IN_QUEUE" },
      { id: "d", status: "IN_QUEUE" },
    ]);
  });

  it("are put among the recent jobs when read or written, not when held (of rows written together, the newest the store keeps), and read in their last state", () => {
    const { store, endOfTurn } = heldStore(5_000, 16 * 1024 * 1024);
    const recent = (store as unknown as { recent: { size: number; has(id: string): boolean; get(id: string): Job | undefined } }).recent;
    const id = (i: number) => `j${String(i).padStart(4, "0")}`;
    for (let i = 0; i < 2_100; i++) store.insert(job(id(i), { queueSeq: i + 1 }));
    endOfTurn();
    expect(recent.size).toBe(0);
    // Read by id from the rows held, then kept at hand.
    const first = store.get(id(0))!;
    expect(recent.has(id(0))).toBe(true);
    // Changed in a later turn: read in its new state, from memory too.
    store.save({ ...first, status: "IN_PROGRESS", startedAt: 1500, workerId: "w" }, ["status", "startedAt", "workerId"], first);
    endOfTurn();
    expect(store.get(id(0))!.status).toBe("IN_PROGRESS");
    expect(recent.get(id(0))!.status).toBe("IN_PROGRESS");
    // Written (a reader of the table asks): the newest 2,000 are kept at hand, the others read from SQLite.
    store.list({ limit: 1, offset: 0 });
    expect(recent.size).toBe(2_000);
    expect([id(2_099), id(100)].map((j) => recent.has(j))).toEqual([true, true]);
    expect([id(99), id(0)].map((j) => recent.has(j))).toEqual([false, false]);
    expect(store.get(id(50))!.status).toBe("IN_QUEUE");
    expect(store.get(id(0))!.status).toBe("IN_PROGRESS");
  });

  it("do not hold a job whose payloads weigh over 64 KiB: its row is written at the end of its turn, or of the turn it grew", () => {
    const { db, store, endOfTurn } = heldStore(1_000, 1024 * 1024 * 1024);
    store.insert(job("light"));
    store.insert(job("big", { queueSeq: 2, input: { image: "A".repeat(70 * 1024) } }));
    endOfTurn();
    expect((db.prepare("SELECT id FROM jobs").all() as { id: string }[]).map((r) => r.id)).toEqual(["big"]);
    expect(store.get("light")?.id).toBe("light");
    // The light one finishes with a large output a turn later: written then, no longer held.
    const light = store.get("light")!;
    store.save({ ...light, status: "COMPLETED", output: { image: "B".repeat(70 * 1024) }, completedAt: 2000, retainUntil: 9000 }, ["status", "output", "completedAt", "retainUntil"], light);
    endOfTurn();
    expect(rowsIn(db)).toBe(2);
    expect((store as unknown as { behind: { held: { size: number } } }).behind.held.size).toBe(0);
    (store as unknown as { recent: { clear(): void } }).recent.clear();
    expect(store.get("light")?.status).toBe("COMPLETED");
  });

  it("are written before each reader of the jobs table reads it", () => {
    const readers: Array<[string, (s: SqliteJobStore) => unknown]> = [
      ["list", (s) => s.list({ limit: 1, offset: 0 })],
      ["counts by status", (s) => s.countByStatus("ep")],
      ["active", (s) => s.countActive()],
      ["by status", (s) => s.listByStatus("IN_QUEUE")],
      ["next deadline", (s) => s.nextDeadline()],
      ["queue sequence", (s) => s.maxQueueSeq()],
      ["stream chunks", (s) => s.chunkCount("a")],
      ["purge", (s) => s.purgeQueued("other")],
    ];
    for (const [name, read] of readers) {
      const { db, store, endOfTurn } = heldStore();
      store.insert(job("a"));
      endOfTurn();
      expect(rowsIn(db), name).toBe(0);
      read(store);
      expect(rowsIn(db), name).toBe(1);
    }
  });

  it("past the bound of rows or of bytes, are written oldest first, several to a statement, until a margin under it is left; the newer stay held", () => {
    const { db, store, endOfTurn } = heldStore(32);
    const id = (i: number) => `j${String(i).padStart(2, "0")}`;
    for (let i = 0; i < 32; i++) store.insert(job(id(i), { queueSeq: i + 1 }));
    endOfTurn();
    expect(rowsIn(db)).toBe(0);
    store.insert(job(id(32), { queueSeq: 33 }));
    // The turn that passes the bound writes, so its answers wait for the commit.
    expect(store.whenDurable()).toBeInstanceOf(Promise);
    endOfTurn();
    // 33 held, bound 32, a sixteenth of it (2) left free: the 3 oldest written.
    expect((db.prepare("SELECT id FROM jobs ORDER BY rowid").all() as { id: string }[]).map((r) => r.id)).toEqual([id(0), id(1), id(2)]);
    expect(store.get(id(3))?.id).toBe(id(3));
    expect(store.get(id(0))?.id).toBe(id(0));
    // A reader writes the rest, after them, in the order they came.
    expect(store.list({ limit: 1, offset: 0 }).total).toBe(33);
    expect((db.prepare("SELECT id FROM jobs ORDER BY rowid").all() as { id: string }[]).map((r) => r.id)).toEqual(Array.from({ length: 33 }, (_, i) => id(i)));

    const bytes = heldStore(1_000, 4_000);
    bytes.store.insert(job("small"));
    bytes.endOfTurn();
    expect(rowsIn(bytes.db)).toBe(0);
    bytes.store.insert(job("large", { input: { text: "x".repeat(5_000) } }));
    bytes.endOfTurn();
    expect(rowsIn(bytes.db)).toBe(2);

    // Past the bytes, only as many of the oldest as make room.
    const some = heldStore(1_000, 12_000);
    some.store.insert(job("big1", { input: { text: "x".repeat(5_000) } }));
    some.store.insert(job("s1", { queueSeq: 2 }));
    some.store.insert(job("s2", { queueSeq: 3 }));
    some.endOfTurn();
    expect(rowsIn(some.db)).toBe(0);
    some.store.insert(job("big2", { queueSeq: 4, input: { text: "y".repeat(5_000) } }));
    some.endOfTurn();
    expect((some.db.prepare("SELECT id FROM jobs").all() as { id: string }[]).map((r) => r.id)).toEqual(["big1"]);
  });

  it("are written once no job was written for a while (the emulator is idle), not while jobs keep coming", () => {
    vi.useFakeTimers();
    const { db, store, endOfTurn } = heldStore();
    store.insert(job("a"));
    endOfTurn();
    vi.advanceTimersByTime(IDLE_MS - 10);
    store.insert(job("b"));
    endOfTurn();
    vi.advanceTimersByTime(10);
    expect(rowsIn(db)).toBe(0); // a job came since: it looks again later
    vi.advanceTimersByTime(IDLE_MS);
    vi.advanceTimersByTime(1); // the flush it asked for, at the end of that turn
    expect(rowsIn(db)).toBe(2);
  });

  it("once idle, are written a generation (4,096 rows) at each end of a turn, and no more once jobs come again", () => {
    vi.useFakeTimers();
    const { db, store, endOfTurn } = heldStore(100_000, 1024 * 1024 * 1024);
    const id = (i: number) => `j${String(i).padStart(5, "0")}`;
    for (let i = 0; i < 10_000; i++) store.insert(job(id(i), { queueSeq: i + 1 }));
    endOfTurn();
    expect(rowsIn(db)).toBe(0);
    vi.advanceTimersByTime(IDLE_MS);
    vi.advanceTimersByTime(1); // the first end of a turn after it
    expect(rowsIn(db)).toBe(4_096);
    vi.advanceTimersByTime(1);
    expect(rowsIn(db)).toBe(8_192);
    // A job comes: the rest stays held until the emulator is idle again.
    store.insert(job("late", { queueSeq: 10_001 }));
    endOfTurn();
    vi.advanceTimersByTime(1);
    expect(rowsIn(db)).toBe(8_192);
    vi.advanceTimersByTime(IDLE_MS + 2);
    expect(rowsIn(db)).toBe(10_001);
    expect((db.prepare("SELECT id FROM jobs ORDER BY rowid DESC LIMIT 1").get() as { id: string }).id).toBe("late");
  });

  it("of a job whose retention ends before they were written are dropped: the deadline timer reads them from memory", () => {
    const { db, store, endOfTurn } = heldStore();
    const a = job("a");
    store.insert(a);
    store.save({ ...a, status: "COMPLETED", output: 1, completedAt: 2000, retainUntil: 3000 }, ["status", "output", "completedAt", "retainUntil"], a);
    const b = job("b", { queueSeq: 2 });
    store.insert(b);
    store.save({ ...b, status: "COMPLETED", output: 2, completedAt: 2000, retainUntil: 5000 }, ["status", "output", "completedAt", "retainUntil"], b);
    endOfTurn();
    expect(store.due(2999, 10)).toEqual({ jobs: [], next: 3000 });
    const due = store.tx(() => store.due(3000, 10));
    expect(due.jobs.map((j) => j.id)).toEqual(["a"]);
    expect(due.next).toBe(5000);
    expect(rowsIn(db)).toBe(0);
    store.delete("a");
    endOfTurn();
    expect(rowsIn(db)).toBe(0);
    expect(store.get("a")).toBeUndefined();
    store.flush();
    expect((db.prepare("SELECT id FROM jobs").all() as { id: string }[]).map((r) => r.id)).toEqual(["b"]);
  });

  it("when many are due at once, give the deadline timer a batch at a time, each without a scan of every row held", () => {
    const { db, store, endOfTurn } = heldStore();
    for (let i = 0; i < 5; i++) {
      const j = job(`j${i}`, { queueSeq: i + 1 });
      store.insert(j);
      store.save({ ...j, status: "COMPLETED", output: i, completedAt: 2000, retainUntil: 3000 + i }, ["status", "output", "completedAt", "retainUntil"], j);
    }
    endOfTurn();
    const seen: string[] = [];
    for (;;) {
      const batch = store.due(9000, 2);
      expect(batch.jobs.length).toBeLessThanOrEqual(2);
      for (const j of batch.jobs) {
        seen.push(j.id);
        store.delete(j.id);
      }
      if (batch.next === undefined || batch.next > 9000) break;
    }
    expect(seen.sort()).toEqual(["j0", "j1", "j2", "j3", "j4"]);
    store.flush();
    expect(rowsIn(db)).toBe(0);
  });

  it("fall due at their new deadline once changed in a later turn, and the deadlines they no longer have do not pile up", () => {
    const { store, endOfTurn } = heldStore(100_000, 1024 * 1024 * 1024);
    const writes = (store as unknown as { behind: { held: { deadlines: { size: number } } } }).behind.held;
    const id = (i: number) => `j${String(i).padStart(5, "0")}`;
    // Held queued (their deadline the ttl, a day on), then finished a turn later (retention: sooner).
    for (let i = 0; i < 6_000; i++) store.insert(job(id(i), { queueSeq: i + 1, expiresAt: 86_400_000 + i }));
    endOfTurn();
    for (let i = 0; i < 6_000; i++) {
      const j = store.get(id(i))!;
      store.save({ ...j, status: "COMPLETED", output: i, completedAt: 2000, retainUntil: 10_000 + i }, ["status", "output", "completedAt", "retainUntil"], j);
    }
    endOfTurn();
    expect(writes.deadlines.size).toBeLessThanOrEqual(2 * 6_000 + 4_096);
    expect(store.due(9_999, 10)).toEqual({ jobs: [], next: 10_000 });
    const due = store.due(10_002, 10);
    expect(due.jobs.map((j) => j.id)).toEqual([id(0), id(1), id(2)]);
    expect(due.next).toBe(10_003);
    // Changed again and again: the stale deadlines are dropped as they pile up.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 6_000; i++) {
        const j = store.get(id(i))!;
        store.save({ ...j, retainUntil: j.retainUntil! + 1 }, ["retainUntil"], j);
      }
      endOfTurn();
    }
    expect(writes.deadlines.size).toBeLessThanOrEqual(2 * 6_000 + 4_096);
    expect(store.due(20_000, 2).jobs.map((j) => j.id)).toEqual([id(0), id(1)]);
  });

  it("orders due jobs held and written by their deadlines", () => {
    const { store, endOfTurn } = heldStore();
    const written = job("w");
    store.insert(written);
    store.save({ ...written, status: "COMPLETED", output: 1, completedAt: 2000, retainUntil: 4000 }, ["status", "output", "completedAt", "retainUntil"], written);
    store.flush();
    const held = job("h", { queueSeq: 2 });
    store.insert(held);
    store.save({ ...held, status: "COMPLETED", output: 1, completedAt: 2000, retainUntil: 3000 }, ["status", "output", "completedAt", "retainUntil"], held);
    endOfTurn();
    expect(store.due(5000, 10).jobs.map((j) => j.id)).toEqual(["h", "w"]);
    const first = store.due(5000, 1);
    expect(first.jobs.map((j) => j.id)).toEqual(["h"]);
    expect(first.next).toBe(4000);
  });

  it("of a job changed again are written whole once, never beside a stale row", () => {
    const { db, store, endOfTurn } = heldStore();
    const a = job("a");
    store.insert(a);
    endOfTurn();
    const running = { ...a, status: "IN_PROGRESS" as const, startedAt: 1500, workerId: "w" };
    store.save(running, ["status", "startedAt", "workerId"], a);
    endOfTurn();
    expect(rowsIn(db)).toBe(0);
    expect(store.get("a")).toEqual(running);
    store.flush();
    expect(db.prepare("SELECT status, worker_id FROM jobs").all()).toEqual([{ status: "IN_PROGRESS", worker_id: "w" }]);
  });

  it("are dropped with the database they were never written to (a snapshot restored, a reset)", () => {
    const { db, store, endOfTurn } = heldStore();
    store.insert(job("a"));
    endOfTurn();
    store.forget();
    expect(store.get("a")).toBeUndefined();
    store.flush();
    expect(rowsIn(db)).toBe(0);
  });

  it("are written for a snapshot or an export (a flush of everything), with the rows other stores hold", () => {
    const { db, writes, store, endOfTurn } = heldStore();
    store.insert(job("a"));
    endOfTurn();
    writes.flush(true);
    expect(rowsIn(db)).toBe(1);
  });
});

describe("without holding (a file database, or memory.heldJobRows 0)", () => {
  it("writes each job at the end of its turn, and its answers wait for that commit", () => {
    const db = openDb(":memory:");
    const writes = new WriteBehind(db);
    const store = new SqliteJobStore(db, writes);
    store.insert(job("a"));
    const durable = store.whenDurable();
    expect(durable).toBeInstanceOf(Promise);
    writes.flush();
    expect(rowsIn(db)).toBe(1);
  });
});
