// An export of an in-memory database under steady writes: SQLite's backup starts over at each
// write, so at the first restart the export puts off the end-of-turn writes (WriteBehind.defer)
// and the copy then ends by steps of the size asked, never in one long step.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqlite, backupInSteps } from "../../src/store/sqlite.js";
import { WriteBehind } from "../../src/store/write-behind.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("backupInSteps of an in-memory database written every turn", () => {
  it("tells of the first restart once, and with the writes put off from then ends by steps of the size asked", async () => {
    const db = openSqlite(":memory:");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, pad BLOB)");
    const insert = db.prepare("INSERT INTO t (pad) VALUES (?)");
    db.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run(Buffer.alloc(4096, i % 251));
    })();
    const pages = db.prepare("PRAGMA page_count").pluck(true).get() as number;
    const dir = mkdtempSync(join(tmpdir(), "backup-steps-"));
    dirs.push(dir);

    // A writer that writes every turn until the copy asks it to hold off.
    let restarts = 0;
    let holding = false;
    let done = false;
    let turns = 0;
    const writer = (async () => {
      for (; !done && turns < 100_000; turns++) {
        if (!holding) insert.run(Buffer.alloc(16));
        await nextTurn();
      }
    })();
    const step = 64;
    let turnsAtRestart = 0;
    await backupInSteps(db, join(dir, "copy.db"), step, () => {
      restarts++;
      holding = true;
      turnsAtRestart = turns;
    });
    done = true;
    await writer;
    expect(restarts).toBe(1);
    // From the restart on, the whole database went by steps of `step` pages: one a turn at most.
    expect(turns - turnsAtRestart).toBeGreaterThanOrEqual(Math.floor(pages / step) - 1);
    const copy = openSqlite(join(dir, "copy.db"));
    expect(copy.prepare("SELECT count(*) FROM t").pluck(true).get()).toBeGreaterThanOrEqual(2_000);
    copy.close();
    db.close();
  });
});

/** A table written behind: values pushed to `waiting` are inserted when the WriteBehind flushes. */
function writtenBehind() {
  const db = openSqlite(":memory:");
  db.exec("CREATE TABLE t (v INTEGER)");
  const writes = new WriteBehind(db);
  const waiting: number[] = [];
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  writes.add({ pending: () => waiting.length > 0, write: () => void waiting.splice(0).forEach((v) => insert.run(v)) });
  const count = () => db.prepare("SELECT count(*) FROM t").pluck(true).get() as number;
  return { db, writes, waiting, count };
}

describe("WriteBehind.defer", () => {
  it("puts off the end-of-turn flush until released, while a flush asked for still writes", async () => {
    const { db, writes, waiting, count } = writtenBehind();

    const release = writes.defer();
    waiting.push(1);
    writes.schedule();
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(count()).toBe(0);
    writes.flush();
    expect(count()).toBe(1);
    waiting.push(2);
    writes.schedule();
    await nextTurn();
    expect(count()).toBe(1);
    release();
    for (let i = 0; i < 3; i++) await nextTurn();
    expect(count()).toBe(2);
    db.close();
  });

  it("holds every write, a flush asked for too, until released", async () => {
    const { db, writes, waiting, count } = writtenBehind();
    const release = writes.hold();
    waiting.push(1);
    writes.flush(true);
    expect(count()).toBe(0);
    release();
    for (let i = 0; i < 3; i++) await nextTurn();
    expect(count()).toBe(1);
    db.close();
  });
});
