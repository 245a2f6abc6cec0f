import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

/** Jobs whose rows wait in memory (the in-memory database's default) as each reader of the jobs table sees them. */
let e: InProcess | undefined;
afterEach(() => {
  e?.close();
  e = undefined;
});

const endOfTurn = () => new Promise((done) => setImmediate(done));
const rowsInSqlite = (x: InProcess) => (x.core.db.prepare("SELECT COUNT(*) AS n FROM jobs").get() as { n: number }).n;

/** An emulator with one job completed and one queued, neither of them written to SQLite yet. */
async function twoHeldJobs(): Promise<{ x: InProcess; done: string; queued: string }> {
  // Written once idle only after a minute of real time: what each test sees is the readers' doing.
  const endpoints = [
    { id: "ep", handler: "echo" as const, workersMin: 1, workersMax: 1 },
    { id: "idle", handler: "echo" as const, workersMin: 0, workersMax: 0 },
  ];
  const x = await inProcess({ config: { memory: { heldJobIdleMs: 60_000 }, endpoints } });
  e = x;
  await x.advance(0);
  const done = (await x.post("/v2/ep/run", { input: { n: 1 } })).body.id as string;
  const queued = (await x.post("/v2/idle/run", { input: { n: 2 } })).body.id as string;
  await endOfTurn();
  expect(rowsInSqlite(x)).toBe(0);
  expect((await x.get(`/v2/ep/status/${done}`)).body).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
  return { x, done, queued };
}

describe("a job whose row is not written yet", () => {
  it("is listed by the control API", async () => {
    const { x, done, queued } = await twoHeldJobs();
    const page = (await x.get("/_emulator/jobs")).body as { count: number; jobs: Array<{ id: string }> };
    expect(page.count).toBe(2);
    expect(page.jobs.map((j) => j.id).sort()).toEqual([done, queued].sort());
  });

  it("is counted by /health and /metrics", async () => {
    const { x } = await twoHeldJobs();
    expect((await x.get("/v2/ep/health")).body.jobs).toMatchObject({ completed: 1, inQueue: 0 });
    expect((await x.get("/v2/idle/health")).body.jobs).toMatchObject({ completed: 0, inQueue: 1 });
    expect((await x.get("/v2/idle/metrics")).status).toBe(200);
  });

  it("is in a snapshot, and back after a reset and its restore", async () => {
    const { x, done, queued } = await twoHeldJobs();
    expect((await x.post("/_emulator/snapshots/held")).status).toBe(200);
    expect((await x.post("/_emulator/reset")).status).toBe(200);
    expect((await x.get(`/v2/ep/status/${done}`)).status).toBe(404);
    expect((await x.post("/_emulator/snapshots/held/restore")).status).toBe(200);
    expect((await x.get(`/v2/ep/status/${done}`)).body).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
    expect((await x.get(`/v2/idle/status/${queued}`)).body.status).toBe("IN_QUEUE");
  });

  it("is in an export", async () => {
    const { x, done, queued } = await twoHeldJobs();
    const exported = await x.app.request("http://minipod.test/_emulator/export");
    expect(exported.status).toBe(200);
    const db = new Database(Buffer.from(await exported.arrayBuffer()));
    try {
      const rows = db.prepare("SELECT id, status FROM jobs ORDER BY status").all();
      expect(rows).toEqual([
        { id: done, status: "COMPLETED" },
        { id: queued, status: "IN_QUEUE" },
      ]);
    } finally {
      db.close();
    }
  });

  it("is dropped, never written, when its retention ends first", async () => {
    const { x, done, queued } = await twoHeldJobs();
    await x.advance(31 * 60_000);
    await endOfTurn();
    expect((await x.get(`/v2/ep/status/${done}`)).status).toBe(404);
    expect(rowsInSqlite(x)).toBe(0);
    expect((await x.get(`/v2/idle/status/${queued}`)).body.status).toBe("IN_QUEUE");
  });
});
