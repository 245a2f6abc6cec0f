import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { JOB_STATUSES } from "../../src/domain/job.js";
import type { SqliteJobStore } from "../../src/store/job-store.js";
import { inProcess, type InProcess } from "../support/in-process.js";

/**
 * `/v2/{endpoint_id}/health` counts an endpoint's jobs from what the job store keeps in memory
 * (counted in SQLite once, then kept true by every write): after every kind of change, the
 * counts it answers are SQL's.
 */
let e: InProcess;
let dir: string | undefined;
afterEach(async () => {
  await e?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const config = { endpoints: [{ id: "ep", handler: "scripted", workersMin: 1, workersMax: 1, executionTimeoutMs: 5_000 }, { id: "other", handler: "echo", workersMin: 1 }] };

/** The endpoint's jobs by status and their retries, as SQL counts them in the database. */
function counted(emu: InProcess, endpointId = "ep") {
  (emu.core.jobStore as unknown as SqliteJobStore).flush();
  const byStatus = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<string, number>;
  for (const r of emu.core.db.prepare(`SELECT status, COUNT(id) AS n FROM jobs WHERE endpoint_id = ? GROUP BY status`).all(endpointId) as Array<{ status: string; n: number }>)
    byStatus[r.status] = r.n;
  const retried = (emu.core.db.prepare(`SELECT COALESCE(SUM(retries), 0) AS n FROM jobs WHERE endpoint_id = ?`).get(endpointId) as { n: number }).n;
  return { byStatus, retried };
}

/** /health's counts (and the store's, every status) are SQL's; returns SQL's. */
async function same(emu: InProcess, what: string, endpointId = "ep") {
  const health = await emu.get(`/v2/${endpointId}/health`);
  expect(health.status, what).toBe(200);
  const sql = counted(emu, endpointId);
  expect(health.body.jobs, what).toEqual({
    completed: sql.byStatus.COMPLETED,
    failed: sql.byStatus.FAILED,
    inProgress: sql.byStatus.IN_PROGRESS,
    inQueue: sql.byStatus.IN_QUEUE,
    retried: sql.retried,
  });
  expect(emu.core.jobStore.countByStatus(endpointId), what).toEqual(sql.byStatus);
  return sql;
}

const run = async (input: unknown, policy?: unknown) => {
  const res = await e.post("/v2/ep/run", policy ? { input, policy } : { input });
  expect(res.status).toBe(200);
  return res.body.id as string;
};

describe("/health's job counts", () => {
  it("stay SQL's through every transition: queued, in progress, completed, failed, cancelled, timed out, retried, purged, expired", async () => {
    e = await inProcess({ config });
    await same(e, "no job yet");
    const store = (e.core.jobStore as unknown as { s: { countByStatus: { all: () => unknown }; sumRetries: { get: () => unknown } } }).s;
    const scans = [vi.spyOn(store.countByStatus, "all"), vi.spyOn(store.sumRetries, "get")];

    await run({ sleepMs: 1000 });
    const failing = await run({ fail: "boom" });
    await run({ sleepMs: 60_000 });
    const cancelled = await run({ sleepMs: 1 });
    await same(e, "one in progress, three queued");
    expect((await e.post(`/v2/ep/cancel/${cancelled}`)).status).toBe(200);
    await same(e, "cancelled in the queue");
    await e.advance(1000);
    await same(e, "completed, failed, the next in progress");
    await e.advance(5_000);
    const after = await same(e, "timed out");
    expect(after.byStatus).toMatchObject({ COMPLETED: 1, FAILED: 1, TIMED_OUT: 1, CANCELLED: 1 });

    expect((await e.post(`/v2/ep/retry/${failing}`)).status).toBe(200);
    await same(e, "retried");
    await e.advance(1);
    expect((await same(e, "failed again")).retried).toBe(1);

    await run({ sleepMs: 10_000 });
    await run({ sleepMs: 1 });
    await run({ sleepMs: 1 });
    await same(e, "two queued behind one in progress");
    expect((await e.post("/v2/ep/purge-queue")).body.removed).toBe(2);
    await same(e, "purged");

    // A job whose ttl ends in the queue is gone; the others' results leave after their retention.
    await run({ sleepMs: 1 }, { ttl: 10_000 });
    await same(e, "queued with a short ttl");
    await e.advance(10_000);
    await same(e, "its ttl ended");
    await e.advance(31 * 60_000);
    const end = await same(e, "every result past its retention");
    expect(Object.values(end.byStatus).reduce((a, b) => a + b)).toBe(0);
    // Another endpoint's jobs are not this one's.
    expect((await e.post("/v2/other/run", { input: { n: 1 } })).status).toBe(200);
    await same(e, "the other endpoint's job", "other");
    await same(e, "not counted here");

    // Counted in SQL at most once per endpoint and change not followed job by job (the purge).
    for (const scan of scans) expect(scan.mock.calls).toHaveLength(2);
  });

  it("stay SQL's after a snapshot restored, a reset, and in an imported state", async () => {
    e = await inProcess({ config });
    await run({ sleepMs: 1000 });
    await run({ sleepMs: 1000 });
    await same(e, "before the snapshot");
    expect((await e.post("/_emulator/snapshots/two")).status).toBe(200);
    await e.advance(1000);
    await run({ fail: "x" });
    await same(e, "after it");
    expect((await e.post("/_emulator/snapshots/two/restore")).status).toBe(200);
    expect((await same(e, "restored")).byStatus).toMatchObject({ IN_PROGRESS: 1, IN_QUEUE: 1 });
    await e.advance(2000);
    await same(e, "run on after the restore");

    const exported = await e.app.request("http://minipod.test/_emulator/export");
    expect(exported.status).toBe(200);
    dir = mkdtempSync(join(tmpdir(), "health-counts-"));
    const file = join(dir, "state.db");
    writeFileSync(file, Buffer.from(await exported.arrayBuffer()));

    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect((await same(e, "reset")).byStatus.COMPLETED).toBe(0);
    await run({ sleepMs: 1 });
    await same(e, "a job after the reset");

    const imported = await inProcess({ config, importFile: file });
    try {
      expect((await same(imported, "imported")).byStatus.COMPLETED).toBe(2);
      expect((await imported.post("/v2/ep/run", { input: { sleepMs: 1 } })).status).toBe(200);
      await same(imported, "a job in the imported state");
    } finally {
      await imported.close();
    }

  });
});
