import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalEntry } from "../../src/domain/observability.js";
import { RESPONSE_KEPT_CHARS } from "../../src/domain/redact.js";
import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const start = () =>
  inProcess({ config: { endpoints: [{ id: "ep", handler: "scripted", workersMin: 1, workersMax: 1 }, { id: "other", workersMin: 1 }] } }).then((x) => (e = x));

describe("request journal", () => {
  it("records service requests with endpoint, operation, status, virtual time and redacted bodies", async () => {
    await start();
    const t0 = e.now();
    await e.post("/v2/ep/run", { input: { a: 1 }, s3Config: { accessId: "id", accessSecret: "S3-SECRET-VALUE", bucketName: "b", endpointUrl: "u" } });
    await e.advance(1000);
    await e.get("/v2/other/health");
    await e.get("/v2/ep/status/nope");
    await e.get("/_emulator/clock"); // control routes are not journaled
    const all = await e.get("/_emulator/requests");
    expect(all.body.count).toBe(3);
    expect(all.body.requests[0]).toMatchObject({ method: "POST", path: "/v2/ep/run", endpoint: "ep", operation: "run", status: 200, at: t0, durationMs: expect.any(Number) });
    expect(all.body.requests[0].body).toEqual({ input: { a: 1 }, s3Config: { accessId: "id", accessSecret: "[redacted]", bucketName: "b", endpointUrl: "u" } });
    expect(all.body.requests[1]).toMatchObject({ endpoint: "other", operation: "health", at: t0 + 1000 });
    expect(all.text).not.toContain("S3-SECRET-VALUE");
    expect(all.text).not.toContain("test-key");

    expect((await e.get("/_emulator/requests?endpoint=ep")).body.count).toBe(2);
    expect((await e.get("/_emulator/requests?operation=status&status=404")).body.requests.map((r: { path: string }) => r.path)).toEqual(["/v2/ep/status/nope"]);
    expect((await e.get("/_emulator/requests?status=abc")).status).toBe(400);
    expect((await e.request("DELETE", "/_emulator/requests")).body).toEqual({ removed: 3 });
    expect((await e.get("/_emulator/requests")).body.count).toBe(0);
  });

  it("records the answers given before any route runs (401, injected faults) and logs each request once", async () => {
    const lines: string[] = [];
    e = await inProcess({ config: { logLevel: "info", endpoints: [{ id: "ep", workersMin: 1, workersMax: 1 }] }, log: (l: string) => lines.push(l) });
    await e.post("/_emulator/faults", { endpoint: "ep", operation: "health", fault: { type: "http", status: 503 }, times: 1 });
    expect((await e.get("/v2/ep/health", { authorization: "" })).status).toBe(503); // the fault acts before authentication
    expect((await e.get("/v2/ep/health", { authorization: "" })).status).toBe(401);
    expect((await e.get("/v2/ep/health")).status).toBe(200);
    const { requests } = (await e.get("/_emulator/requests")).body;
    expect(requests.map((r: { status: number; operation: string }) => [r.operation, r.status])).toEqual([
      ["health", 503],
      ["health", 401],
      ["health", 200],
    ]);
    const logged = lines.filter((l) => / GET \/v2\/ep\/health /.test(l));
    expect(logged.map((l) => / (\d{3}) [\d.]+ms$/.exec(l)?.[1])).toEqual(["503", "401", "200"]);
  });
});

describe("request journal: query strings and error answers", () => {
  it("keeps each request's query, and the problem+json of each error answer, bounded", async () => {
    await start();
    const { id } = (await e.post("/v2/ep/run", { input: {} })).body;
    await e.get(`/v2/ep/status/${id}?ttl=60000&api_key=QUERY-SECRET&Access%20Token=QUERY-SECRET-2`);
    const refused = await e.get(`/v2/ep/status/${id}?ttl=5`);
    expect(refused.status).toBe(400);
    const missing = await e.get("/v2/nope/stream/x?wait=1000");
    // A problem+json longer than the bound: a body with many invalid fields.
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`field${i}`, 1]));
    const long = await e.post("/v2/network-volumes", { name: "v", size: 10, dataCenter: "EU-RO-1", ...many });
    expect(long.status).toBe(400);
    expect(long.text.length).toBeGreaterThan(RESPONSE_KEPT_CHARS);

    const { requests } = (await e.get("/_emulator/requests")).body as { requests: JournalEntry[] };
    expect(requests.map((r) => [r.path, r.query, r.status])).toEqual([
      ["/v2/ep/run", undefined, 200],
      [`/v2/ep/status/${id}`, "ttl=60000&api_key=[redacted]&Access%20Token=[redacted]", 200],
      [`/v2/ep/status/${id}`, "ttl=5", 400],
      ["/v2/nope/stream/x", "wait=1000", 404],
      ["/v2/network-volumes", undefined, 400],
    ]);
    expect(JSON.stringify(requests)).not.toContain("QUERY-SECRET");
    expect(requests.slice(0, 2).map((r) => r.response)).toEqual([undefined, undefined]);
    expect(requests[2]!.response).toEqual(refused.body);
    expect(requests[3]!.response).toEqual(missing.body);
    expect(requests[4]!.response).toBe(`${long.text.slice(0, RESPONSE_KEPT_CHARS)}… [${long.text.length} characters in all]`);
  });

  it("keeps them through a database file and a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-journal-"));
    const options = { db: join(dir, "state.db"), config: { endpoints: [{ id: "ep" }] } };
    e = await inProcess(options);
    await e.get("/v2/ep/status/gone?ttl=60000");
    e.close();
    e = await inProcess(options);
    const [entry] = (await e.get("/_emulator/requests")).body.requests as JournalEntry[];
    expect(entry).toMatchObject({ query: "ttl=60000", status: 404, response: { status: 404, detail: expect.stringContaining('job "gone" not found') } });
  });
});

describe("job timeline", () => {
  it("lists every transition with virtual time and cause, and outlives the job", async () => {
    await start();
    const t0 = e.now();
    const { id } = (await e.post("/v2/ep/run", { input: { sleepMs: 500, fail: "boom" }, policy: { ttl: 60_000 } })).body;
    await e.advance(500);
    const firstWorker = (await e.get(`/v2/ep/status/${id}`)).body.workerId;
    await e.post(`/v2/ep/retry/${id}`);
    await e.advance(500);
    const secondWorker = (await e.get(`/v2/ep/status/${id}`)).body.workerId;
    expect(firstWorker).toEqual(expect.any(String));
    await e.advance(60_000);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
    const { events } = (await e.get(`/_emulator/jobs/${id}/events`)).body;
    expect(events.map((ev: Record<string, unknown>) => [Number(ev.at) - t0, ev.from ?? null, ev.to ?? null, ev.cause])).toEqual([
      [0, null, "IN_QUEUE", "submitted with /run"],
      [0, "IN_QUEUE", "IN_PROGRESS", `started on worker ${firstWorker}`],
      [500, "IN_PROGRESS", "FAILED", "handler failed: boom"],
      [500, "FAILED", "IN_QUEUE", "retried"],
      [500, "IN_QUEUE", "IN_PROGRESS", `started on worker ${secondWorker}`],
      [1000, "IN_PROGRESS", "FAILED", "handler failed: boom"],
      [60_000, "FAILED", null, "ttl expired"],
    ]);
    expect((await e.get("/_emulator/jobs/unknown/events")).status).toBe(404);
  });
});

describe("snapshots", () => {
  it("saves the whole state and puts it back in place, clock included", async () => {
    await start();
    const kept = (await e.post("/v2/ep/run", { input: { output: "kept" } })).body.id;
    await e.advance(0);
    const saved = await e.post("/_emulator/snapshots/base");
    expect(saved.body).toMatchObject({ name: "base", at: e.now(), bytes: expect.any(Number) });
    const savedAt = e.now();
    const journaled = (await e.get("/_emulator/requests")).body.requests;
    expect(journaled.map((r: { path: string }) => r.path)).toEqual(["/v2/ep/run"]);
    const timeline = (await e.get(`/_emulator/jobs/${kept}/events`)).body.events;
    expect(timeline.map((ev: { to?: string }) => ev.to)).toEqual(["IN_QUEUE", "IN_PROGRESS", "COMPLETED"]);

    const later = (await e.post("/v2/ep/run", { input: { sleepMs: 100 } })).body.id;
    await e.advance(3_600_000); // the first job's retention ends
    expect((await e.get(`/v2/ep/status/${kept}`)).status).toBe(404);

    const restored = await e.post("/_emulator/snapshots/base/restore");
    expect(restored.status).toBe(200);
    expect(e.now()).toBe(savedAt);
    // The journal is part of the state: requests made since the snapshot leave it, whether or not they were written yet.
    expect((await e.get("/_emulator/requests")).body.requests).toEqual(journaled);
    expect((await e.get(`/v2/ep/status/${kept}`)).body).toMatchObject({ status: "COMPLETED", output: "kept" });
    expect((await e.get(`/v2/ep/status/${later}`)).status).toBe(404);
    // So are the timelines: the retention's end recorded since the snapshot leaves with it, held in memory or not.
    expect((await e.get(`/_emulator/jobs/${kept}/events`)).body.events).toEqual(timeline);
    expect((await e.get(`/_emulator/jobs/${later}/events`)).status).toBe(404);
    // Timers were rebuilt from the restored state: retention ends 30 minutes after completion.
    await e.advance(30 * 60_000);
    expect((await e.get(`/v2/ep/status/${kept}`)).status).toBe(404);
    expect((await e.get("/_emulator/snapshots")).body.snapshots.map((s: { name: string }) => s.name)).toEqual(["base"]);
    expect((await e.post("/_emulator/snapshots/nope/restore")).status).toBe(404);
    expect((await e.post("/_emulator/snapshots/bad%20name")).status).toBe(400);
  });

  it("answers for a job as the restored state has it, not as it was changed since", async () => {
    await start();
    await e.post("/v2/ep/run", { input: { sleepMs: 60_000 } }); // keeps the one worker busy
    const waiting = (await e.post("/v2/ep/run", { input: {} })).body.id;
    await e.advance(0);
    expect((await e.get(`/v2/ep/status/${waiting}`)).body.status).toBe("IN_QUEUE");
    await e.post("/_emulator/snapshots/queued");
    expect((await e.post(`/v2/ep/cancel/${waiting}`)).body.status).toBe("CANCELLED");
    await e.post("/_emulator/snapshots/queued/restore");
    expect((await e.get(`/v2/ep/status/${waiting}`)).body.status).toBe("IN_QUEUE");
  });

  it("exports the state as a SQLite file with secrets redacted", async () => {
    await start();
    await e.post("/v2/other/run", { input: { q: 1 }, s3Config: { accessId: "id", accessSecret: "EXPORT-SECRET", bucketName: "b", endpointUrl: "u" } });
    const exported = await e.app.request("http://minipod.test/_emulator/export");
    expect(exported.headers.get("content-type")).toBe("application/vnd.sqlite3");
    const bytes = Buffer.from(await exported.arrayBuffer());
    expect(bytes.includes(Buffer.from("EXPORT-SECRET"))).toBe(false);
    const db = new Database(bytes);
    const row = db.prepare("SELECT input, s3_config FROM jobs").get() as { input: string; s3_config: string };
    const journal = db.prepare("SELECT path, body FROM request_journal").all() as Array<{ path: string; body: string }>;
    const timelines = db.prepare("SELECT events FROM job_timeline").all() as Array<{ events: string }>;
    db.close();
    expect(JSON.parse(row.input)).toEqual({ q: 1 });
    expect(JSON.parse(row.s3_config).accessSecret).toBe("[redacted]");
    // The journal's rows too, those held in memory until now included.
    expect(journal.map((r) => [r.path, JSON.parse(r.body).s3Config.accessSecret])).toEqual([["/v2/other/run", "[redacted]"]]);
    // And the job's timeline, held in memory until now.
    expect(timelines.flatMap((r) => (JSON.parse(r.events) as unknown[][]).map((ev) => ev[2]))).toEqual(["IN_QUEUE", "IN_PROGRESS", "COMPLETED"]);
  });
});

describe("run until idle", () => {
  it("advances until no job waits or runs", async () => {
    await start();
    for (let i = 0; i < 3; i++) await e.post("/v2/ep/run", { input: { sleepMs: 10_000 } });
    const res = await e.post("/_emulator/run-until-idle");
    expect(res.body.advancedMs).toBe(30_000);
    expect((await e.get("/v2/ep/health")).body.jobs).toMatchObject({ completed: 3, inQueue: 0, inProgress: 0 });
  });
});

describe("snapshots and export on a file database (WAL)", () => {
  it("restore and export work when the database is a WAL file", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const file = join(mkdtempSync(join(tmpdir(), "minipod-wal-")), "state.db");
    e = await inProcess({ db: file, config: { endpoints: [{ id: "ep", workersMin: 1 }] } });
    const { id } = (await e.post("/v2/ep/run", { input: { w: 1 } })).body;
    await e.advance(0);
    expect((await e.post("/_emulator/snapshots/s")).status).toBe(200);
    await e.post("/v2/ep/purge-queue");
    await e.advance(31 * 60_000);
    expect((await e.get(`/v2/ep/status/${id}`)).status).toBe(404);
    expect((await e.post("/_emulator/snapshots/s/restore")).status).toBe(200);
    expect((await e.get(`/v2/ep/status/${id}`)).body).toMatchObject({ status: "COMPLETED", output: { w: 1 } });
    const exported = await e.app.request("http://minipod.test/_emulator/export");
    expect(exported.status).toBe(200);
    const db = new Database(Buffer.from(await exported.arrayBuffer()));
    expect((db.prepare("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n).toBe(1);
    db.close();
  });
});
