import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { RawJson } from "../../src/domain/json-text.js";
import { openDb } from "../../src/store/db.js";
import { SqliteJobStore } from "../../src/store/job-store.js";
import { WriteBehind } from "../../src/store/write-behind.js";
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

const count = (db: ReturnType<typeof openDb>) => (db.prepare(`SELECT COUNT(*) AS n FROM payload_parts`).get() as { n: number }).n;

describe("large payloads in parts", () => {
  it("stages a 5 MB input over several turns, no statement binding more than a part; the row refers to it, and it is read only when asked for", async () => {
    const db = openDb(":memory:");
    const bound = spyOnWrites(db);
    const jobs = new SqliteJobStore(db);
    const input = large(5);
    let turns = 0;
    let stored: RawJson | undefined;
    void jobs.stagePayload(input)!.then((s) => (stored = s));
    while (!stored && turns < 50) {
      await turn();
      turns++;
    }
    expect(stored).toBeInstanceOf(StoredJson);
    expect(turns).toBeGreaterThanOrEqual(5); // 5 MB at most 1 MB a turn
    expect(Math.max(...bound)).toBeLessThanOrEqual(256 * 1024);
    jobs.insert(queuedJob("big", { input: stored as never }));
    await settle(jobs);
    const row = db.prepare<[], { input: string }>(`SELECT input FROM jobs WHERE id = 'big'`).get()!;
    expect(row.input).toMatch(/^#parts:[a-z0-9]+-\d+:\d+$/);
    const again = new SqliteJobStore(db).get("big")!;
    expect(again.input).toBeInstanceOf(StoredJson);
    expect((again.input as unknown as StoredJson).size).toBe(input.text.length);
    expect((again.input as unknown as StoredJson).text).toBe(input.text);
  });

  it("reads a stored payload a part a turn when asked to preload it, and not again after", async () => {
    const db = openDb(":memory:");
    const jobs = new SqliteJobStore(db);
    const input = large(3);
    jobs.insert(queuedJob("big", { input: (await jobs.stagePayload(input))! as never }));
    await settle(jobs);
    const stored = new SqliteJobStore(db).get("big")!.input as unknown as StoredJson;
    let ready = false;
    void stored.preload()!.then(() => (ready = true));
    let turns = 0;
    while (!ready && turns < 100) {
      await turn();
      turns++;
    }
    expect(turns).toBeGreaterThanOrEqual(Math.ceil(input.text.length / (256 * 1024)) - 1);
    expect(stored.preload()).toBeUndefined();
    expect(stored.text).toBe(input.text);
  });

  it("stages nothing up to 1 MiB, and writes a stored input's reference again unchanged when the job moves", async () => {
    const db = openDb(":memory:");
    const jobs = new SqliteJobStore(db);
    expect(jobs.stagePayload(new RawJson(JSON.stringify({ s: "x".repeat(PARTS_FROM - 20) })))).toBeUndefined();
    jobs.insert(queuedJob("big", { input: (await jobs.stagePayload(large(2)))! as never }));
    await settle(jobs);
    const before = db.prepare(`SELECT input FROM jobs WHERE id = 'big'`).get();
    const parts = count(db);
    expect(parts).toBe(Math.ceil(large(2).text.length / (256 * 1024)));
    const read = new SqliteJobStore(db);
    read.save({ ...read.get("big")!, status: "IN_PROGRESS" }); // a whole-row write
    await settle(read);
    expect(db.prepare(`SELECT input FROM jobs WHERE id = 'big'`).get()).toEqual(before);
    expect(count(db)).toBe(parts);
  });

  it("deletes the parts with their job, and a replaced output's parts with it", async () => {
    const db = openDb(":memory:");
    const jobs = new SqliteJobStore(db);
    const [input, output] = await Promise.all([jobs.stagePayload(large(2))!, jobs.stagePayload(large(2, "B"))!]);
    jobs.insert(queuedJob("a", { input: input as never, status: "COMPLETED", output }));
    jobs.insert(queuedJob("other", { input: (await jobs.stagePayload(large(2, "C")))! as never }));
    await settle(jobs);
    const names = () => db.prepare<[], { n: number }>(`SELECT COUNT(DISTINCT name) AS n FROM payload_parts`).get()!.n;
    expect(names()).toBe(3);
    jobs.save({ ...jobs.get("a")!, status: "IN_QUEUE", output: undefined }, ["status", "output"]);
    await settle(jobs);
    expect(names()).toBe(2);
    jobs.delete("a");
    await settle(jobs);
    expect(names()).toBe(1);
    expect((jobs.get("other")!.input as unknown as RawJson).text).toBe(large(2, "C").text);
  });

  it("deletes at the next start the parts of a payload no job came to refer to", async () => {
    const file = fileDb();
    {
      const db = openDb(file);
      const jobs = new SqliteJobStore(db);
      jobs.insert(queuedJob("kept", { input: (await jobs.stagePayload(large(2)))! as never }));
      await settle(jobs);
      await jobs.stagePayload(large(3, "B")); // the process stops before the job's row is written
      db.close();
    }
    const db = openDb(file);
    expect(count(db)).toBe(Math.ceil(large(2).text.length / (256 * 1024)) + Math.ceil(large(3).text.length / (256 * 1024)));
    const jobs = new SqliteJobStore(db);
    expect(count(db)).toBe(Math.ceil(large(2).text.length / (256 * 1024)));
    expect((jobs.get("kept")!.input as unknown as RawJson).text).toBe(large(2).text);
  });

  it("refuses a payload whose parts cannot be committed (a full database), leaving none of them", async () => {
    const db = openDb(":memory:");
    const failures: unknown[] = [];
    const jobs = new SqliteJobStore(db, new WriteBehind(db, (e) => failures.push(e)));
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    const used = db.pragma("page_count", { simple: true }) as number;
    db.pragma(`max_page_count = ${used + Math.ceil((3 * MB) / pageSize)}`);
    await expect(jobs.stagePayload(large(5))!).rejects.toThrow(/full/);
    expect(count(db)).toBe(0);
    expect(failures).toHaveLength(1);
    db.pragma("max_page_count = 1073741823");
    expect(await jobs.stagePayload(large(5))).toBeInstanceOf(StoredJson);
  });
});

async function settle(jobs: SqliteJobStore) {
  for (let i = 0; i < 100; i++) {
    const durable = jobs.whenDurable();
    if (!durable) return;
    await durable;
  }
}
