import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDb } from "../../src/store/db.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { SqliteObservabilityStore } from "../../src/store/observability-store.js";
import { inProcess } from "../support/in-process.js";

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
      observe.appendRequest({
        method: "GET",
        path: "/v2/ep/health",
        query: "x=1",
        endpoint: "ep",
        operation: "health",
        status: 404,
        at: 6,
        durationMs: 0.5,
        bodyText: undefined,
        responseText: '{"status":404}',
      });
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

  it("carry the resources of the previous version's tables into documents: the REST API shows each as before (ids, fields, order)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-migrations-"));
    dirs.push(dir);
    const config = { endpoints: [{ id: "configured", handler: "echo" }] };
    // Resources made through the API, one virtual second apart, and what the API shows of them.
    const scratch = await inProcess({ config });
    const made = async (path: string, body: unknown) => {
      const res = await scratch.post(path, body);
      expect(res.status, `POST ${path}: ${res.text}`).toBeLessThan(300);
      await scratch.advance(1000);
      return res.body as { id: string };
    };
    const auth = await made("/v1/containerregistryauth", { name: "creds", username: "bot", password: "pw-migrated-1" });
    await made("/v2/registries", { name: "creds 2", username: "bot", password: "pw-migrated-2" });
    const volume = await made("/v2/network-volumes", { name: "data", size: 20, dataCenter: "EU-RO-1", type: "HIGH_PERFORMANCE" });
    await made("/v1/networkvolumes", { name: "more", size: 50, dataCenterId: "EU-RO-1" });
    const serving = await made("/v1/templates", { name: "serving", imageName: "me/img:1", isServerless: true, handler: "echo", env: { A: "1" }, containerRegistryAuthId: auth.id });
    await made("/v1/templates", { name: "plain", imageName: "me/plain:2" });
    await made("/v1/endpoints", { name: "ep one", templateId: serving.id, workersMax: 2, gpuTypeIds: ["NVIDIA L4"], networkVolumeId: volume.id, executionTimeoutMs: 60000 });
    await made("/v1/endpoints", { name: "ep two", templateId: serving.id });
    await made("/v1/pods", { name: "private", imageName: "me/pod:1", containerRegistryAuthId: auth.id });
    await made("/v1/pods", { name: "stopped", imageName: "me/pod:2", gpuTypeIds: ["NVIDIA L4"] });
    const paths = [
      "/v1/containerregistryauth",
      "/v2/registries",
      "/v2/network-volumes",
      "/v1/networkvolumes",
      "/v1/templates",
      "/v2/templates",
      "/v1/endpoints",
      "/v2/serverless",
      "/v1/pods",
      "/v2/pods",
    ];
    const shown = async (e: typeof scratch) => Object.fromEntries(await Promise.all(paths.map(async (p) => [p, (await e.get(p)).body] as const)));
    const before = await shown(scratch);
    const endedAt = scratch.now();
    const docs = scratch.core.db.prepare("SELECT kind, id, owner, created_at, data FROM documents ORDER BY created_at, rowid").all() as Array<{
      kind: string;
      id: string;
      owner: string | null;
      created_at: number;
      data: string;
    }>;
    scratch.close();
    expect(docs.filter((d) => d.kind === "pod")).toHaveLength(2);

    // The same resources as the previous version wrote them: each in its own table, each table
    // filled newest first (the list order comes from created_at, not from the order of the rows).
    const file = join(dir, "previous.db");
    const old = new Database(file);
    // The version before the resources moved into documents (later migrations came after it).
    const previous = MIGRATIONS.findIndex((m) => m.includes("DROP TABLE endpoints"));
    for (const sql of MIGRATIONS.slice(0, previous)) old.exec(sql);
    old.pragma(`user_version = ${previous}`);
    const insert = (table: string, row: Record<string, unknown>) =>
      old.prepare(`INSERT INTO ${table} (${Object.keys(row).join(", ")}) VALUES (${Object.keys(row).map((k) => `@${k}`).join(", ")})`).run(row);
    for (const d of [...docs].reverse()) {
      const v = JSON.parse(d.data);
      if (d.kind === "network-volume")
        insert("network_volumes", { id: v.id, name: v.name, size_gb: v.size, data_center: v.dataCenter, type: v.type, created_at: v.createdAt, updated_at: v.updatedAt });
      else if (d.kind === "template") {
        const { id, name, handler, createdAt, updatedAt, ...fields } = v;
        // "plain" as a row written before these fields existed: they come back with their defaults.
        if (name === "plain") for (const k of ["startSsh", "startJupyter", "allowedCudaVersions"]) delete fields[k];
        insert("templates", { id, name, handler: handler ?? null, fields: JSON.stringify(fields), created_at: createdAt, updated_at: updatedAt });
      } else if (d.kind === "pod") insert("pods", { id: v.id, created_at: v.createdAt, data: d.data });
      else if (d.kind === "registry-auth") insert("registry_auths", { id: v.id, name: v.name, username: v.username, password: v.password, created_at: v.createdAt });
      else if (d.kind === "endpoint") {
        insert("endpoints", {
          id: v.id,
          name: v.name,
          handler: JSON.stringify(v.handler),
          workers_min: v.workersMin,
          workers_max: v.workersMax,
          idle_timeout: v.idleTimeout,
          cold_start_ms: v.coldStartMs,
          execution_timeout_ms: v.executionTimeoutMs ?? null,
          created_at: v.createdAt,
          extra: JSON.stringify(v.extra),
        });
      } else insert("documents", d);
    }
    old.close();

    const after = await inProcess({ config, db: file });
    try {
      await after.advance(endedAt - after.now()); // a pod's uptime is counted on the clock
      expect(after.core.db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      expect(await shown(after)).toEqual(before);
      expect((await after.get("/v1/pods")).body.map((p: { name: string }) => p.name)).toEqual(["private", "stopped"]);
      expect((await after.get("/v1/networkvolumes")).body.map((v: { name: string }) => v.name)).toEqual(["data", "more"]);
      // The old tables are gone; the password is kept (pods pull with it) but still never shown.
      const left = after.core.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('network_volumes', 'templates', 'pods', 'registry_auths', 'endpoints')").all();
      expect(left).toEqual([]);
      const stored = after.core.db.prepare("SELECT data FROM documents WHERE kind = 'registry-auth' AND id = ?").get(auth.id) as { data: string };
      expect(JSON.parse(stored.data)).toMatchObject({ name: "creds", username: "bot", password: "pw-migrated-1" });
      expect((await after.request("DELETE", `/v1/containerregistryauth/${auth.id}`)).status).toBe(400); // a pod uses it
      // Creation order goes on after the migrated resources.
      await after.post("/v2/network-volumes", { name: "newer", size: 10, dataCenter: "EU-RO-1" });
      expect((await after.get("/v1/networkvolumes")).body.map((v: { name: string }) => v.name)).toEqual(["data", "more", "newer"]);
    } finally {
      after.close();
    }
  });
});
