import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDb } from "../../src/store/db.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { SqliteObservabilityStore } from "../../src/store/observability-store.js";

describe("migrations", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("carry the timeline and the journal of a version 5 database over: no AUTOINCREMENT, a job's events of a turn in one row, order kept", () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-migrations-"));
    dirs.push(dir);
    const file = join(dir, "v5.db");
    const old = new Database(file);
    for (const sql of MIGRATIONS.slice(0, 5)) old.exec(sql);
    old.pragma("user_version = 5");
    const event = old.prepare("INSERT INTO job_events (job_id, endpoint_id, at, from_status, to_status, cause) VALUES (?, 'ep', ?, NULL, 'IN_QUEUE', 'submitted')");
    for (let i = 1; i <= 3; i++) event.run(`j${i}`, i);
    old.prepare("INSERT INTO request_journal (method, path, endpoint_id, operation, status, at, duration_ms, body) VALUES ('POST', '/v2/ep/run', 'ep', 'run', 200, 5, 1.5, '{\"input\":{}}')").run();
    old.close();

    const db = openDb(file);
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      const observe = new SqliteObservabilityStore(db);
      expect(observe.events("j2")).toEqual([{ jobId: "j2", endpointId: "ep", at: 2, from: undefined, to: "IN_QUEUE", cause: "submitted" }]);
      observe.appendRequest({ method: "GET", path: "/v2/ep/health", query: "x=1", endpoint: "ep", operation: "health", status: 404, at: 6, durationMs: 0.5, bodyText: undefined, responseText: '{"status":404}' });
      const { requests } = observe.requests({ endpoint: "ep" });
      expect(requests.map((r) => [r.method, r.at, r.body, r.query, r.response])).toEqual([["POST", 5, { input: {} }, undefined, undefined], ["GET", 6, undefined, "x=1", { status: 404 }]]);
      for (let i = 4; i <= 6; i++) observe.appendEvent({ jobId: `j${i}`, endpointId: "ep", at: i, from: undefined, to: "IN_QUEUE", cause: "submitted" });
      observe.appendEvent({ jobId: "j2", endpointId: "ep", at: 7, from: "IN_QUEUE", to: "IN_PROGRESS", cause: "started" });
      observe.appendEvent({ jobId: "j2", endpointId: "ep", at: 7, from: "IN_PROGRESS", to: "COMPLETED", cause: "handler returned" });
      observe.flush();
      expect(db.prepare("SELECT COUNT(*) AS n FROM job_timeline WHERE job_id = 'j2'").get()).toEqual({ n: 2 }); // the old row, and this turn's two events in one
      expect(observe.events("j2").map((e) => [e.at, e.from, e.to])).toEqual([[2, undefined, "IN_QUEUE"], [7, "IN_QUEUE", "IN_PROGRESS"], [7, "IN_PROGRESS", "COMPLETED"]]);
      observe.trimLogs({ timelineRows: 2, timelineEvents: 2, deliveries: 2 }); // keeps the newest two rows
      expect(db.prepare("SELECT job_id FROM job_timeline ORDER BY seq").all()).toEqual([{ job_id: "j6" }, { job_id: "j2" }]);
      const sql = (name: string) => (db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(name) as { sql: string }).sql;
      expect(sql("job_timeline")).not.toMatch(/AUTOINCREMENT/);
      expect(sql("request_journal")).not.toMatch(/AUTOINCREMENT/);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'job_events'").all()).toEqual([]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('job_timeline', 'request_journal')").all()).toEqual([{ name: "job_timeline_job" }]);
    } finally {
      db.close();
    }
  });
});
