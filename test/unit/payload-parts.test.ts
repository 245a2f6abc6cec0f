import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { RawJson } from "../../src/domain/json-text.js";
import { openDb } from "../../src/store/db.js";
import { SqliteJobStore } from "../../src/store/job-store.js";
import { PARTS_FROM, StoredJson } from "../../src/store/payload-parts.js";
import { queuedJob } from "../support/jobs.js";

const MB = 1024 * 1024;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** A large input as a submission holds it: its JSON text, never parsed on the event loop. */
const large = (mb: number, letter = "A") => new RawJson(JSON.stringify({ image: letter.repeat(mb * MB) }));

function fileDb() {
  const dir = mkdtempSync(join(tmpdir(), "minipod-parts-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "state.db");
}

/** Every statement's bound text lengths, by the SQL's first words. */
function spyOnWrites(db: ReturnType<typeof openDb>) {
  const bound: number[] = [];
  const prepare = db.prepare.bind(db);
  (db as { prepare: unknown }).prepare = (sql: string) => {
    const st = prepare(sql);
    if (!/^\s*(INSERT|UPDATE)/i.test(sql)) return st;
    const run = st.run.bind(st);
    (st as { run: unknown }).run = (...args: unknown[]) => {
      for (const a of args.flat()) if (typeof a === "string") bound.push(a.length);
      return run(...(args as []));
    };
    return st;
  };
  return bound;
}

describe("large payloads in parts", () => {
  it("writes a job's 5 MB input in parts over several turns, no statement binding more than a part, and says it is durable only once all are in", async () => {
    const db = openDb(":memory:");
    const bound = spyOnWrites(db);
    const jobs = new SqliteJobStore(db);
    const input = large(5);
    jobs.insert(queuedJob("big", { input: input as never }));
    let durable = false;
    void jobs.whenDurable()!.then(() => (durable = true));
    let turns = 0;
    while (!durable && turns < 50) {
      await turn();
      turns++;
    }
    expect(durable).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(5); // 5 MB at most 1 MB a turn
    expect(Math.max(...bound)).toBeLessThanOrEqual(256 * 1024);
    const row = db.prepare<[], { input: string }>(`SELECT input FROM jobs WHERE id = 'big'`).get()!;
    expect(row.input).toMatch(/^#parts:input-[a-z0-9]+-\d+:\d+$/);
    // Read back through a fresh store: the same text, read only when asked for.
    const again = new SqliteJobStore(db).get("big")!;
    expect(again.input).toBeInstanceOf(StoredJson);
    expect((again.input as unknown as StoredJson).size).toBe(input.text.length);
    expect((again.input as unknown as StoredJson).text).toBe(input.text);
  });

  it("keeps small payloads in the row, and writes a stored input's reference again unchanged when the job moves", async () => {
    const db = openDb(":memory:");
    const jobs = new SqliteJobStore(db);
    jobs.insert(queuedJob("small", { input: new RawJson(JSON.stringify({ s: "x".repeat(PARTS_FROM - 20) })) as never }));
    jobs.insert(queuedJob("big", { input: large(2) as never }));
    await settle(jobs);
    expect(db.prepare(`SELECT COUNT(DISTINCT job_id) AS n FROM payload_parts`).get()).toEqual({ n: 1 });
    const before = db.prepare(`SELECT input FROM jobs WHERE id = 'big'`).get();
    const parts = db.prepare(`SELECT COUNT(*) AS n FROM payload_parts`).get();
    expect(parts).toEqual({ n: Math.ceil(large(2).text.length / (256 * 1024)) });
    const read = new SqliteJobStore(db);
    const job = read.get("big")!;
    read.save({ ...job, status: "IN_PROGRESS" }); // a whole-row write
    await settle(read);
    expect(db.prepare(`SELECT input FROM jobs WHERE id = 'big'`).get()).toEqual(before);
    expect(db.prepare(`SELECT COUNT(*) AS n FROM payload_parts`).get()).toEqual(parts);
  });

  it("deletes the parts with their job, and a replaced output's parts with it", async () => {
    const db = openDb(":memory:");
    const jobs = new SqliteJobStore(db);
    jobs.insert(queuedJob("a", { input: large(2) as never, status: "COMPLETED", output: large(2, "B") as never }));
    await settle(jobs);
    const names = () => db.prepare<[], { name: string }>(`SELECT DISTINCT name FROM payload_parts ORDER BY name`).all().map((r) => r.name.split("-")[0]);
    expect(names()).toEqual(["input", "output"]);
    const job = jobs.get("a")!;
    jobs.save({ ...job, status: "IN_QUEUE", output: undefined }, ["status", "output"]);
    await settle(jobs);
    expect(names()).toEqual(["input"]);
    jobs.delete("a");
    await settle(jobs);
    expect(db.prepare(`SELECT COUNT(*) AS n FROM payload_parts`).get()).toEqual({ n: 0 });
  });

  it("at the next start, deletes a job whose input was half-written and runs again one whose output was", async () => {
    const file = fileDb();
    {
      const db = openDb(file);
      const jobs = new SqliteJobStore(db);
      jobs.insert(queuedJob("done", { input: large(2) as never, status: "COMPLETED", output: large(2, "B") as never }));
      await settle(jobs);
      jobs.insert(queuedJob("half-input", { input: large(3) as never }));
      const finished = jobs.get("done")!;
      jobs.save({ ...finished, output: large(3, "C") as never }, ["output"]);
      await turn(); // the rows and the first parts are committed; the rest never are
      db.close();
    }
    const db = openDb(file);
    const jobs = new SqliteJobStore(db);
    expect(jobs.repaired).toBe(2);
    expect(jobs.get("half-input")).toBeUndefined();
    const done = jobs.get("done")!;
    expect(done.status).toBe("IN_PROGRESS");
    expect(done.output).toBeUndefined();
    expect((done.input as unknown as RawJson).text).toBe(large(2).text);
  });
});

async function settle(jobs: SqliteJobStore) {
  for (let i = 0; i < 100; i++) {
    const durable = jobs.whenDurable();
    if (!durable) return;
    await durable;
  }
}
