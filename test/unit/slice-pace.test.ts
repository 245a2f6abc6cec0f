// Copies are paced by the time they take, read from the stopwatch they are given: a turn of the
// event loop ends once about 10 ms have passed, however many rows that was, so a machine that
// slows down in the middle of a copy still lets the loop turn every 10 to 20 ms. Time here is a
// fake one that each row written moves on (a trigger calling the test), so the figures are the
// same on any machine.
import { describe, expect, it } from "vitest";
import { copyImage, imageOf } from "../../src/store/image-copy.js";
import { migrate } from "../../src/store/db.js";
import { openSqlite, type Db } from "../../src/store/sqlite.js";

const ROWS = 3_000;

function source(rows = ROWS): Db {
  const db = openSqlite(":memory:");
  migrate(db);
  const chunk = db.prepare("INSERT INTO stream_chunks (job_id, seq, item) VALUES (?, ?, ?)");
  db.transaction(() => {
    for (let i = 0; i < rows; i++) chunk.run(`job-${i % 7}`, i, JSON.stringify({ i }));
  })();
  return db;
}

/** Fake time: each row written into `db`'s table moves it on by `cost()` ms. */
function fakeTime(db: Db, table: string, cost: () => number): { now: () => number; rows: () => number } {
  let t = 0;
  let rows = 0;
  db.function("minipod_test_tick", () => {
    t += cost();
    rows++;
    return null;
  });
  db.exec(`CREATE TEMP TRIGGER minipod_test_tick AFTER INSERT ON main."${table}" BEGIN SELECT minipod_test_tick(); END`);
  return { now: () => t, rows: () => rows };
}

/** The fake time at each turn of the event loop until `done` settles; and its longest step. */
async function turnsOf(now: () => number, done: Promise<unknown>): Promise<{ turns: number; longest: number }> {
  let ended = false;
  void done.finally(() => (ended = true));
  let last = now();
  let longest = 0;
  let turns = 0;
  while (!ended) {
    await new Promise((resolve) => setImmediate(resolve));
    longest = Math.max(longest, now() - last);
    last = now();
    turns++;
  }
  await done;
  return { turns, longest };
}

describe("the pace of a copy", () => {
  it("ends each turn after about 10 ms of the time it is given, when rows suddenly cost 500 times more", async () => {
    const from = source();
    const to = openSqlite(":memory:");
    migrate(to);
    // Rows cost 0.01 ms each, then from the 1,000th on 5 ms each (the machine slowed down).
    const time = fakeTime(to, "stream_chunks", () => (time.rows() < 1_000 ? 0.01 : 5));
    const { turns, longest } = await turnsOf(time.now, copyImage(from, to, "one transaction", time.now));
    expect(to.prepare("SELECT count(*) FROM stream_chunks").pluck(true).get()).toBe(ROWS);
    // 2,000 rows of 5 ms: 10 s of fake time, in turns of at most 10 ms and one row.
    expect(longest).toBeLessThanOrEqual(15);
    expect(turns).toBeGreaterThanOrEqual(2_000 * 5 / 15);
    from.close();
    to.close();
  });

  it("makes a snapshot's image by turns of about 10 ms of the time it is given", async () => {
    const from = source();
    let t = 0;
    // Every reading of the stopwatch costs 0.02 ms: a row copied costs a few.
    const now = () => (t += 0.02);
    const made = imageOf(from, now);
    const { turns, longest } = await turnsOf(() => t, made);
    const image = await made;
    expect(image.prepare("SELECT count(*) FROM stream_chunks").pluck(true).get()).toBe(ROWS);
    expect(longest).toBeLessThanOrEqual(15);
    expect(turns).toBeGreaterThan(3);
    image.close();
    from.close();
  });
});
