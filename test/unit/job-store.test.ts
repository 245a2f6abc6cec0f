import { RawJson } from "../../src/domain/json-text.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { Job } from "../../src/domain/job.js";
import { queuedJob as job } from "../support/jobs.js";
import { openDb } from "../../src/store/db.js";
import { StoredJson } from "../../src/store/payload-parts.js";
import { SqliteJobStore } from "../../src/store/job-store.js";
import { SqliteObservabilityStore } from "../../src/store/observability-store.js";
import { LATER_MS, WriteBehind } from "../../src/store/write-behind.js";


describe("job store", () => {
  it("puts a job among the recent jobs once, in its last state, when its row is written", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    const recent = (store as unknown as { recent: { set(id: string, job: Job): void } }).recent;
    const set = vi.spyOn(recent, "set");
    const j = job("a");
    store.insert(j);
    const running = { ...j, status: "IN_PROGRESS" as const, startedAt: 1500, workerId: "w" };
    store.save(running, ["status", "startedAt", "workerId"], j);
    const done = { ...running, status: "COMPLETED" as const, output: { n: 1 }, completedAt: 2000, retainUntil: 3000 };
    store.save(done, ["status", "output", "completedAt", "retainUntil"], running);
    expect(store.get("a")).toBe(done); // the write waiting
    expect(set).not.toHaveBeenCalled();
    store.flush();
    expect(set.mock.calls).toEqual([["a", done]]);
    expect(store.get("a")).toBe(done);
  });

  it("writes whole jobs and reads them back field for field", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    const j = job("a", { webhook: "http://hook", s3Config: { accessId: "i", accessSecret: "s", bucketName: "b", endpointUrl: "u" }, lowPriority: true });
    store.insert(j);
    expect(store.get("a")).toEqual(j);
    const done = { ...j, status: "COMPLETED" as const, output: { n: 1 }, completedAt: 2000, retainUntil: 3000, workerId: "w" };
    store.save(done);
    expect(store.get("a")).toEqual(done);
  });

  it("writes only the changed fields when told which, keeps the deadline index right, and re-creates a row that is gone", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    const j = job("a");
    store.insert(j);
    // The unchanged fields are not written: a stale copy's other fields do not overwrite the row.
    store.save({ ...j, status: "IN_PROGRESS", startedAt: 1500, timeoutAt: 5000, input: { stale: true } }, ["status", "startedAt", "timeoutAt"]);
    expect(store.get("a")).toEqual({ ...j, status: "IN_PROGRESS", startedAt: 1500, timeoutAt: 5000 });
    expect(store.nextDeadline()).toBe(5000);
    expect(store.due(5000, 10).jobs.map((d) => d.id)).toEqual(["a"]);
    store.save({ ...j, status: "COMPLETED", startedAt: 1500, timeoutAt: undefined, output: [1, 2], completedAt: 2000, retainUntil: 4000 }, [
      "status",
      "timeoutAt",
      "output",
      "completedAt",
      "retainUntil",
    ]);
    expect(store.get("a")).toMatchObject({ status: "COMPLETED", startedAt: 1500, timeoutAt: undefined, output: [1, 2], retainUntil: 4000 });
    expect(store.nextDeadline()).toBe(4000);
    store.delete("a");
    store.save({ ...j, streamCursor: 2 }, ["streamCursor"]);
    expect(store.get("a")).toEqual({ ...j, streamCursor: 2 });
  });
});

describe("job store: a job saved with the version it was made from", () => {
  it("keeps the job as given when it was made from the current version, and applies only the changed fields to a stale one", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    store.insert(job("a"));
    const current = store.get("a")!;
    const started = { ...current, status: "IN_PROGRESS" as const, startedAt: 1500, workerId: "w" };
    store.save(started, ["status", "startedAt", "workerId"], current);
    expect(store.get("a")).toBe(started);
    // Made from a version that is no longer the store's: its other fields do not win.
    const stale = { ...current, output: { p: 1 }, input: { stale: true } };
    store.save(stale, ["output"], current);
    expect(store.get("a")).not.toBe(stale);
    expect(store.get("a")).toEqual({ ...started, output: { p: 1 } });
    store.flush();
    expect(new SqliteJobStore(store["db"]).get("a")).toEqual({ ...started, output: { p: 1 } });
  });
});

describe("job store: jobs kept in memory", () => {
  it("answers reads as the database would after every kind of write", () => {
    const db = openDb(":memory:");
    const store = new SqliteJobStore(db);
    const fresh = () => {
      store.flush();
      return new SqliteJobStore(db); // reads the database only
    };
    store.insert(job("a"));
    store.insert(job("b", { queueSeq: 2 }));
    store.insert(job("c", { endpointId: "other", queueSeq: 3 }));
    expect(store.get("a")).toEqual(fresh().get("a"));
    store.save({ ...job("a"), status: "IN_PROGRESS", startedAt: 5, workerId: "w" }, ["status", "startedAt", "workerId"]);
    expect(store.get("a")).toEqual(fresh().get("a"));
    store.save({ ...job("a"), status: "COMPLETED", output: { ok: 1 }, input: { stale: 1 } }, ["status", "output"]);
    expect(store.get("a")).toEqual(fresh().get("a"));
    expect(store.get("a")).toMatchObject({ status: "COMPLETED", output: { ok: 1 }, input: { prompt: "hi" }, workerId: "w" });
    expect(store.purgeQueued("ep")).toEqual(["b"]);
    expect(store.get("b")).toBeUndefined();
    store.delete("a");
    expect(store.get("a")).toBeUndefined();
    store.deleteEndpointJobs("other");
    expect(store.get("c")).toBeUndefined();
    store.insert(job("d"));
    store.deleteAll();
    expect(store.get("d")).toBeUndefined();
  });

  it("reads the database again after forget() (a snapshot replaced it)", () => {
    const db = openDb(":memory:");
    const store = new SqliteJobStore(db);
    store.insert(job("a"));
    store.flush();
    db.prepare("UPDATE jobs SET status = 'CANCELLED' WHERE id = 'a'").run();
    expect(store.get("a")?.status).toBe("IN_QUEUE");
    store.forget();
    expect(store.get("a")?.status).toBe("CANCELLED");
  });
});

describe("job store: the next queued job", () => {
  it("finds jobs entering the queue after it was found empty: submitted, re-queued, or restored underneath", () => {
    const db = openDb(":memory:");
    const store = new SqliteJobStore(db);
    expect(store.nextQueued("ep")).toBeUndefined();
    expect(store.countScalingDemand("ep", 5)).toBe(0);
    store.insert(job("a"));
    expect(store.nextQueued("ep")?.id).toBe("a");
    expect(store.countScalingDemand("ep", 5)).toBe(1);
    const running = { ...job("a"), status: "IN_PROGRESS" as const, startedAt: 5 };
    store.save(running, ["status", "startedAt"]);
    expect(store.nextQueued("ep")).toBeUndefined();
    store.save({ ...running, status: "IN_QUEUE", retries: 1 }, ["status", "retries"]);
    expect(store.nextQueued("ep")).toMatchObject({ id: "a", retries: 1 });
    store.save(running, ["status"]);
    expect(store.nextQueued("ep")).toBeUndefined();
    store.flush();
    db.prepare("UPDATE jobs SET status = 'IN_QUEUE'").run();
    store.forget();
    expect(store.nextQueued("ep")?.id).toBe("a");
    expect(store.nextQueued("other")).toBeUndefined();
  });
});

describe("job store: the queue in memory", () => {
  it("keeps queue order by queueSeq, a re-queued job back at its place, and counts the demand without low-priority jobs", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    expect(store.nextQueued("ep")).toBeUndefined(); // read (empty) from the database, kept from now on
    for (const [id, seq, low] of [["a", 1, false], ["b", 2, true], ["c", 3, false], ["d", 4, false]] as const) store.insert(job(id, { queueSeq: seq, lowPriority: low }));
    expect(store.countScalingDemand("ep", 10)).toBe(3);
    expect(store.countScalingDemand("ep", 2)).toBe(2);
    const take = () => {
      const next = store.nextQueued("ep")!;
      store.save({ ...next, status: "IN_PROGRESS" }, ["status"]);
      return next.id;
    };
    expect([take(), take()]).toEqual(["a", "b"]);
    store.save({ ...job("a"), status: "IN_QUEUE", retries: 1 }, ["status", "retries"]); // a worker was lost: back at seq 1
    store.save({ ...job("d"), status: "CANCELLED" }, ["status"]);
    expect(store.countScalingDemand("ep", 10)).toBe(2);
    expect([take(), take(), store.nextQueued("ep")]).toEqual(["a", "c", undefined]);
    store.insert(job("e", { queueSeq: 5 }));
    store.delete("e");
    expect(store.nextQueued("ep")).toBeUndefined();
  });

  it("matches what a fresh store reads from the database after many random moves", () => {
    const db = openDb(":memory:");
    const store = new SqliteJobStore(db);
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    store.nextQueued("ep");
    for (let i = 0; i < 400; i++) {
      const id = `j${rand(40)}`;
      const current = store.get(id);
      const op = rand(4);
      if (!current) store.insert(job(id, { queueSeq: rand(1000), lowPriority: rand(3) === 0 }));
      else if (op === 0) store.delete(id);
      else store.save({ ...current, status: (["IN_QUEUE", "IN_PROGRESS", "COMPLETED"] as const)[rand(3)]! }, ["status"]);
      if (i % 37 === 0) store.flush();
    }
    store.flush();
    const fresh = new SqliteJobStore(db);
    const order = (s: SqliteJobStore) => {
      const ids: string[] = [];
      for (let next = s.nextQueued("ep"); next; next = s.nextQueued("ep")) {
        ids.push(next.id);
        s.save({ ...next, status: "IN_PROGRESS" }, ["status"]);
      }
      return ids;
    };
    expect(store.countScalingDemand("ep", 1000)).toBe(fresh.countScalingDemand("ep", 1000));
    const expected = order(fresh);
    expect(expected.length).toBeGreaterThan(3);
    expect(order(store)).toEqual(expected);
  });
});

describe("job store: writes behind", () => {
  const rows = (db: ReturnType<typeof openDb>) => db.prepare("SELECT id, status FROM jobs ORDER BY id").all();
  const endOfTurn = () => new Promise((r) => setImmediate(r));

  it("writes a turn's changes at its end, one statement per job, and says when they are committed", async () => {
    const db = openDb(":memory:");
    const store = new SqliteJobStore(db);
    expect(store.whenDurable()).toBeUndefined();
    store.insert(job("a"));
    store.save({ ...job("a"), status: "IN_PROGRESS", startedAt: 5 }, ["status", "startedAt"]);
    store.save({ ...job("a"), status: "COMPLETED", startedAt: 5, completedAt: 6 }, ["status", "completedAt"]);
    store.insert(job("b"));
    store.delete("b"); // never reaches the database
    expect(rows(db)).toEqual([]);
    expect(store.get("a")?.status).toBe("COMPLETED");
    const durable = store.whenDurable()!;
    const changes = () => (db.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
    const before = changes();
    await durable;
    expect(changes() - before).toBe(1); // one INSERT of the job as it ended, not an INSERT and two UPDATEs
    expect(rows(db)).toEqual([{ id: "a", status: "COMPLETED" }]);
    expect(new SqliteJobStore(db).get("a")).toMatchObject({ status: "COMPLETED", startedAt: 5, completedAt: 6 });
    expect(store.whenDurable()).toBeUndefined();
  });

  it("in a database file, commits the jobs and the timelines of a turn in one transaction, and inside someone's transaction waits for its end to call them committed", async () => {
    // A database in memory holds timeline rows past the turn (observability-store); a file does not.
    const dir = mkdtempSync(join(tmpdir(), "minipod-turn-"));
    const db = openDb(join(dir, "state.db"));
    onTestFinished(() => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const errors: unknown[] = [];
    const writes = new WriteBehind(db, (e) => errors.push(e));
    const store = new SqliteJobStore(db, writes);
    const observe = new SqliteObservabilityStore(db, writes);
    const event = (jobId: string) => observe.appendEvent({ jobId, endpointId: "ep", at: 1, from: undefined, to: "IN_QUEUE", cause: "submitted" });
    store.insert(job("a"));
    event("a");
    await store.whenDurable();
    expect(rows(db)).toEqual([{ id: "a", status: "IN_QUEUE" }]);
    expect(observe.events("a")).toHaveLength(1);
    // One transaction: a timeline row that cannot be written takes the turn's job writes with it.
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON job_timeline WHEN NEW.job_id = 'b' BEGIN SELECT RAISE(ABORT, 'no'); END");
    store.insert(job("b"));
    event("b");
    await expect(store.whenDurable()).rejects.toThrow("no");
    expect(errors).toHaveLength(1);
    expect(rows(db)).toEqual([{ id: "a", status: "IN_QUEUE" }]);

    // A batch inside someone's transaction: written into it, durable only once the turn ends.
    let settled = false;
    store.tx(() => {
      store.save({ ...job("a"), status: "CANCELLED" }, ["status"]);
      void store.whenDurable()!.then(() => (settled = true));
    });
    expect(rows(db)).toEqual([{ id: "a", status: "CANCELLED" }]);
    await Promise.resolve();
    expect(settled).toBe(false);
    await endOfTurn();
    expect(settled).toBe(true);
  });

  it("in a database file, lets journal rows wait for the next commit, or for LATER_MS, and writes them before any read", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const dir = mkdtempSync(join(tmpdir(), "minipod-journal-"));
    const db = openDb(join(dir, "state.db"));
    try {
      const writes = new WriteBehind(db);
      const store = new SqliteJobStore(db, writes);
      const observe = new SqliteObservabilityStore(db, writes);
      const journalRows = () => (db.prepare("SELECT COUNT(*) AS n FROM request_journal").get() as { n: number }).n;
      const changes = () => (db.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
      const request = (path: string) =>
        observe.appendRequest({ method: "GET", path, query: undefined, endpoint: "ep", operation: undefined, status: 200, at: 1, durationMs: 0.1, bodyText: undefined, responseText: undefined });
      request("/v2/ep/status/1");
      await endOfTurn();
      expect(journalRows()).toBe(0); // no commit of its own at the end of the turn
      // The next turn that commits anyway takes it along.
      store.insert(job("a"));
      request("/v2/ep/run");
      const before = changes();
      await store.whenDurable();
      expect(changes() - before).toBe(3); // the job and both requests
      expect(journalRows()).toBe(2);
      // With nothing else to commit, the timer writes it.
      request("/v2/ep/status/a");
      vi.advanceTimersByTime(LATER_MS - 1);
      expect(journalRows()).toBe(2);
      vi.advanceTimersByTime(1);
      expect(journalRows()).toBe(3);
      // A read of the journal sees every request before it.
      request("/v2/ep/health");
      expect(observe.requests({}).requests.map((r) => r.path)).toEqual(["/v2/ep/status/1", "/v2/ep/run", "/v2/ep/status/a", "/v2/ep/health"]);
      // Many rows of a commit, written in statements of several rows, keep their order.
      const paths = Array.from({ length: 70 }, (_, i) => `/v2/ep/status/n${i}`);
      for (const p of paths) request(p);
      expect(observe.requests({ limit: 70 }).requests.map((r) => r.path)).toEqual(paths);
      expect(observe.requests({}).count).toBe(74);
    } finally {
      vi.useRealTimers();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("in a database in memory, holds journal rows until they are read, snapshotted or exported, at most the journal's size", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const db = openDb(":memory:");
      const writes = new WriteBehind(db);
      const store = new SqliteJobStore(db, writes);
      const observe = new SqliteObservabilityStore(db, writes);
      const journalRows = () => (db.prepare("SELECT COUNT(*) AS n FROM request_journal").get() as { n: number }).n;
      const request = (path: string, bodyText?: string) =>
        observe.appendRequest({
          method: bodyText === undefined ? "GET" : "POST",
          path,
          query: undefined,
          endpoint: "ep",
          operation: undefined,
          status: 200,
          at: 1,
          durationMs: 0.1,
          bodyText,
          responseText: undefined,
        });
      request("/v2/ep/run", JSON.stringify({ input: { prompt: "x" }, s3Config: { accessSecret: "hush" } }));
      store.insert(job("a"));
      await store.whenDurable();
      vi.advanceTimersByTime(10 * LATER_MS);
      expect(journalRows()).toBe(0); // neither the turn's commit nor a timer wrote it
      writes.flush(); // as before a read of jobs with SQL: they are not needed there
      expect(journalRows()).toBe(0);
      // Written (its body parsed and redacted) when needed: here by a flush of all, as before a snapshot.
      writes.flush(true);
      expect(db.prepare("SELECT body FROM request_journal").all()).toEqual([{ body: JSON.stringify({ input: { prompt: "x" }, s3Config: { accessSecret: "[redacted]" } }) }]);
      request("/v2/ep/run", "{not json");
      expect(observe.requests({}).requests.map((r) => r.body)).toEqual([{ input: { prompt: "x" }, s3Config: { accessSecret: "[redacted]" } }, "[not JSON]"]);
      // Trimmed to the journal's size across the rows written and the rows held, newest kept.
      const paths = Array.from({ length: 10 }, (_, i) => `/v2/ep/status/n${i}`);
      for (const p of paths) request(p);
      observe.trimRequests(4);
      expect(journalRows()).toBe(0); // the held rows alone are the newest four
      expect(observe.requests({}).requests.map((r) => r.path)).toEqual(paths.slice(6));
      request("/v2/ep/health");
      request("/v2/ep/health");
      observe.trimRequests(4);
      expect(observe.requests({}).requests.map((r) => r.path)).toEqual([...paths.slice(8), "/v2/ep/health", "/v2/ep/health"]);
      expect(observe.clearRequests()).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it("folds a turn's updates of a job into one UPDATE of all their fields, leaving the callers' field lists alone", async () => {
    const db = openDb(":memory:");
    const store = new SqliteJobStore(db);
    store.insert(job("c"));
    await endOfTurn();
    const statusOnly = Object.freeze(["status"] as const);
    store.save({ ...job("c"), status: "IN_PROGRESS" }, statusOnly);
    store.save({ ...job("c"), status: "IN_PROGRESS", workerId: "w", input: { stale: true } }, ["workerId"]);
    await endOfTurn();
    expect(statusOnly).toEqual(["status"]);
    expect(new SqliteJobStore(db).get("c")).toEqual({ ...job("c"), status: "IN_PROGRESS", workerId: "w" });
  });

  it("re-creates in one turn a job deleted and inserted again, and flushes before every query", async () => {
    const db = openDb(":memory:");
    const store = new SqliteJobStore(db);
    store.insert(job("a"));
    await endOfTurn();
    store.delete("a");
    store.insert(job("a", { status: "IN_QUEUE", retries: 3 }));
    expect(store.list({ limit: 10, offset: 0 }).jobs.map((j) => [j.id, j.retries])).toEqual([["a", 3]]);
    store.save({ ...job("a"), status: "CANCELLED" }, ["status"]);
    expect(store.countByStatus("ep").CANCELLED).toBe(1);
    expect(rows(db)).toEqual([{ id: "a", status: "CANCELLED" }]);
  });

  it("fails the waiters and tells when a turn's writes cannot be committed", async () => {
    const db = openDb(":memory:");
    const errors: string[] = [];
    const store = new SqliteJobStore(db, new WriteBehind(db, (e) => errors.push((e as Error).message)));
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON jobs BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    store.insert(job("a"));
    await expect(store.whenDurable()).rejects.toThrow("disk full");
    expect(errors).toEqual(["disk full"]);
    expect(rows(db)).toEqual([]);
  });
});

describe("job store: stream chunks", () => {
  it("go with their job, however it is deleted", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    const withChunks = (id: string, over: Partial<Job> = {}) => {
      store.insert(job(id, over));
      store.appendChunks(id, [{ output: 1 }, { output: 2 }]);
      expect(store.chunkCount(id)).toBe(2);
    };
    withChunks("a");
    store.delete("a");
    expect(store.chunkCount("a")).toBe(0);
    withChunks("b");
    store.purgeQueued("ep");
    expect(store.chunkCount("b")).toBe(0);
    withChunks("c", { endpointId: "other" });
    withChunks("d");
    store.deleteEndpointJobs("other");
    expect([store.chunkCount("c"), store.chunkCount("d")]).toEqual([0, 2]);
    store.deleteAll();
    expect(store.chunkCount("d")).toBe(0);
  });
});

describe("job store: due deadlines", () => {
  it("reads the due jobs and the next deadline after them in one query", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    for (const [id, at] of [["a", 100], ["b", 200], ["c", 300], ["d", 400]] as const) store.insert(job(id, { expiresAt: at }));
    expect(store.due(50, 10)).toEqual({ jobs: [], next: 100 });
    const some = store.due(250, 10);
    expect([some.jobs.map((j) => j.id), some.next]).toEqual([["a", "b"], 300]);
    const limited = store.due(1000, 3);
    expect([limited.jobs.map((j) => j.id), limited.next]).toEqual([["a", "b", "c"], 400]); // d is due too: a next round reads it
    const all = store.due(1000, 10);
    expect([all.jobs.length, all.next]).toEqual([4, undefined]);
  });

  it("reads due jobs of large payloads a bounded part at a time (32 MB of payloads, at least one job)", () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    // Payloads kept in their rows (up to 1 MiB each): 2 MB a job.
    const payload = () => new RawJson(`{"image":"${"x".repeat(1_000_000)}"}`);
    for (let i = 0; i < 40; i++) store.insert(job(`j${String(i).padStart(2, "0")}`, { expiresAt: 100 + i, input: payload(), status: "COMPLETED", output: payload() }));
    store.flush();
    const fit = Math.floor((32 * 1024 * 1024) / (2 * payload().text.length));
    const first = store.due(1000, 500);
    expect([first.jobs.length, first.next]).toEqual([fit, 100 + fit]);
    expect(first.jobs[0]!.input).toBeInstanceOf(RawJson);
    for (const j of first.jobs) store.delete(j.id);
    expect(store.due(1000, 500).jobs.length).toBe(fit);
  });

  it("reads due jobs whose payloads are in parts without reading the parts", async () => {
    const store = new SqliteJobStore(openDb(":memory:"));
    const large = () => store.stagePayload(new RawJson(`{"image":"${"x".repeat(12 * 1024 * 1024)}"}`))!;
    for (const [id, at] of [["a", 100], ["b", 200], ["c", 300], ["d", 400]] as const) store.insert(job(id, { expiresAt: at, input: await large() }));
    store.flush();
    const due = store.due(1000, 500);
    expect(due.jobs.map((j) => j.id)).toEqual(["a", "b", "c", "d"]);
    expect(due.jobs.every((j) => j.input instanceof StoredJson)).toBe(true);
  });
});
