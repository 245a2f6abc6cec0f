// A restore or import into a file database fills shadow tables in small transactions and swaps
// them in with one short one: the WAL never holds the whole image, the schema (indexes, triggers,
// AUTOINCREMENT counters) is as it was, and a copy that fails leaves the old state and no shadow.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrate, openDb, SHADOW_PREFIX } from "../../src/store/db.js";
import { copyImage } from "../../src/store/image-copy.js";
import { openSqlite, type Db } from "../../src/store/sqlite.js";

const MB = 1024 * 1024;

/** An image of `docs` documents of kind `kind`, each `size` characters, and a few timeline rows. */
function image(kind: string, docs: number, size: number): Db {
  const db = openSqlite(":memory:");
  migrate(db);
  const doc = db.prepare("INSERT INTO documents (kind, id, owner, created_at, data) VALUES (?, ?, NULL, ?, ?)");
  const event = db.prepare(DELIVERY);
  db.transaction(() => {
    for (let i = 0; i < docs; i++) doc.run(kind, `d-${i}`, i, JSON.stringify({ i, pad: "x".repeat(size) }));
    for (let i = 0; i < 3; i++) event.run(`${kind}-${i}`);
  })();
  return db;
}

const DELIVERY = "INSERT INTO webhook_deliveries (job_id, endpoint_id, url, attempt, at) VALUES (?, 'e', 'http://x', 1, 0)";

const schema = (db: Db) => db.prepare("SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name").all();

describe("copyImage into a file database", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "minipod-copy-file-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("commits in slices: the WAL stays a few MB while a 40 MB image is copied", async () => {
    const file = join(dir, "state.db");
    const to = openDb(file);
    const from = image("new", 4_000, 10_000);
    let largestWal = 0;
    let turns = 0;
    // Measured at every turn of the loop the copy lets go.
    let copying = true;
    const watch = () => {
      if (!copying) return;
      turns++;
      largestWal = Math.max(largestWal, statSync(`${file}-wal`).size);
      setImmediate(watch);
    };
    setImmediate(watch);
    try {
      await copyImage(from, to);
    } finally {
      copying = false;
    }
    largestWal = Math.max(largestWal, statSync(`${file}-wal`).size);
    expect(to.prepare("SELECT count(*) AS n FROM documents WHERE kind = 'new'").get()).toEqual({ n: 4_000 });
    expect(turns).toBeGreaterThan(5);
    // One transaction over the whole copy leaves a WAL as large as the image (40 MB).
    expect(largestWal).toBeLessThan(16 * MB);
    from.close();
    to.close();
  });

  it("keeps the schema: indexes, triggers and AUTOINCREMENT counters", async () => {
    const to = openDb(join(dir, "state.db"));
    const before = schema(to);
    const timeline = to.prepare(DELIVERY);
    for (let i = 0; i < 10; i++) timeline.run(`old-${i}`);
    to.prepare("DELETE FROM webhook_deliveries").run();
    const from = image("new", 10, 10);
    await copyImage(from, to);
    expect(schema(to)).toEqual(before);
    // The counter goes on from the higher of the two (10 here, 3 in the image).
    timeline.run("next");
    expect(to.prepare("SELECT seq FROM webhook_deliveries WHERE job_id = 'next'").get()).toEqual({ seq: 11 });
    // The jobs' triggers are there: a job's deletion takes its payload's parts with it.
    to.prepare("INSERT INTO payload_parts (name, part, text) VALUES ('p', 0, 'x')").run();
    to.prepare(
      `INSERT INTO jobs (id, endpoint_id, kind, status, input, execution_timeout_ms, ttl_ms, low_priority, created_at, queued_at, retries, attempt, queue_seq, expires_at, deadline_at, stream_cursor)
       VALUES ('j', 'e', 'run', 'IN_QUEUE', '#parts:p:1', 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0)`,
    ).run();
    to.prepare("DELETE FROM jobs WHERE id = 'j'").run();
    expect(to.prepare("SELECT count(*) AS n FROM payload_parts").get()).toEqual({ n: 0 });
    from.close();
    to.close();
  });

  it("leaves the old state and no shadow table when the copy fails", async () => {
    const to = openDb(join(dir, "state.db"));
    to.prepare("INSERT INTO documents (kind, id, owner, created_at, data) VALUES ('old', 'x', NULL, 0, '{}')").run();
    const from = image("new", 500, 1_000);
    // A row the target refuses (NOT NULL), after many good ones.
    from.exec("ALTER TABLE documents RENAME TO d0; CREATE TABLE documents (kind, id, owner, created_at, data); INSERT INTO documents SELECT * FROM d0; DROP TABLE d0;");
    from.prepare("UPDATE documents SET data = NULL WHERE id = 'd-499'").run();
    await expect(copyImage(from, to)).rejects.toThrow(/NOT NULL/);
    expect(to.prepare("SELECT kind, id FROM documents").all()).toEqual([{ kind: "old", id: "x" }]);
    expect(to.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE ?").get(`${SHADOW_PREFIX}%`)).toEqual({ n: 0 });
    from.close();
    to.close();
  });
});
