// A snapshot's image made by turns (imageOf): the same rows, schema, schema version and
// AUTOINCREMENT counters as SQLite's own serialisation, and the state of one moment: a write made
// to the database while it copies is in the image whole or not at all.
import { describe, expect, it } from "vitest";
import { imageOf, tables } from "../../src/store/image-copy.js";
import { migrate } from "../../src/store/db.js";
import { openSqlite, pragmaValue, type Db } from "../../src/store/sqlite.js";

function filled(): Db {
  const db = openSqlite(":memory:");
  migrate(db);
  const chunk = db.prepare("INSERT INTO stream_chunks (job_id, seq, item) VALUES (?, ?, ?)");
  const doc = db.prepare("INSERT INTO documents (kind, id, owner, created_at, data) VALUES (?, ?, NULL, ?, ?)");
  db.transaction(() => {
    for (let i = 0; i < 2_000; i++) chunk.run(`job-${i % 7}`, i, "a");
    for (let i = 0; i < 500; i++) doc.run(i % 2 ? "template" : "pod", `id-${i}`, i, JSON.stringify({ i }));
    for (let i = 0; i < 5; i++) {
      db.prepare("INSERT INTO webhook_deliveries (job_id, endpoint_id, url, attempt, status, at) VALUES ('j', 'e', 'http://x', ?, 200, 0)").run(i);
    }
    // The counter goes on past the rows left.
    db.prepare("DELETE FROM webhook_deliveries WHERE attempt > 1").run();
  })();
  return db;
}

const contents = (db: Db) =>
  Object.fromEntries(tables(db).map((t) => [t, db.prepare(`SELECT * FROM "${t}" ORDER BY 1, 2`).raw(true).all()]));
const schema = (db: Db) => db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").all();

describe("imageOf", () => {
  it("holds what SQLite's serialisation holds", async () => {
    const from = filled();
    const image = await imageOf(from);
    const serialized = openSqlite(from.serialize());
    expect(contents(image)).toEqual(contents(serialized));
    expect(schema(image)).toEqual(schema(serialized));
    expect(pragmaValue(image, "user_version")).toBe(pragmaValue(serialized, "user_version"));
    // An AUTOINCREMENT table's counter, past its rows (rows deleted since).
    expect(image.prepare("SELECT name, seq FROM sqlite_sequence").all()).toEqual([{ name: "webhook_deliveries", seq: 5 }]);
    image.close();
    serialized.close();
    from.close();
  });

  it("holds a write made while it copies whole or not at all", async () => {
    const from = filled();
    let t = 0;
    const made = imageOf(from, () => (t += 0.05));
    let turns = 0;
    let ended = false;
    void made.finally(() => (ended = true));
    // Turns into the copy, one statement changes every row: the image has them all "a" or all "b".
    for (; !ended; turns++) {
      if (turns === 3) from.prepare("UPDATE stream_chunks SET item = 'b'").run();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const image = await made;
    expect(turns).toBeGreaterThan(3);
    const items = image.prepare("SELECT DISTINCT item FROM stream_chunks").pluck(true).all();
    expect(items).toEqual(["b"]);
    expect(image.prepare("SELECT count(*) FROM stream_chunks").pluck(true).get()).toBe(2_000);
    image.close();
    from.close();
  });

  it("ends however steadily the database is written (its third try in one turn)", async () => {
    const from = filled();
    let t = 0;
    const made = imageOf(from, () => (t += 0.05));
    let ended = false;
    void made.finally(() => (ended = true));
    let n = 0;
    for (let turns = 0; !ended && turns < 100_000; turns++) {
      from.prepare("INSERT INTO stream_chunks (job_id, seq, item) VALUES ('steady', ?, 'c')").run(n++);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const image = await made;
    const steady = image.prepare("SELECT count(*) FROM stream_chunks WHERE job_id = 'steady'").pluck(true).get() as number;
    expect(steady).toBeGreaterThan(0);
    expect(steady).toBeLessThanOrEqual(n);
    image.close();
    from.close();
  });
});
