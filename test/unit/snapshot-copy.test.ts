// A restore copies an image's tables a page at a time in key order: every row arrives once, in
// tables with a rowid and in WITHOUT ROWID ones, across many pages.
import { describe, expect, it } from "vitest";
import { copyImage } from "../../src/store/image-copy.js";
import { migrate } from "../../src/store/db.js";
import { openSqlite } from "../../src/store/sqlite.js";

describe("copyImage", () => {
  it("copies every row of tables of several pages, with and without a rowid", async () => {
    const source = openSqlite(":memory:");
    migrate(source);
    const chunk = source.prepare("INSERT INTO stream_chunks (job_id, seq, item) VALUES (?, ?, ?)");
    const doc = source.prepare("INSERT INTO documents (kind, id, owner, created_at, data) VALUES (?, ?, NULL, ?, ?)");
    source.transaction(() => {
      // Keys that do not arrive in insertion order, and a composite key whose first part repeats.
      for (let i = 0; i < 2_345; i++) chunk.run(`job-${i % 7}`, (i * 7919) % 10_007, JSON.stringify({ i }));
      for (let i = 0; i < 2_101; i++) doc.run(i % 2 ? "template" : "pod", `id-${(i * 31) % 5_003}`, i, JSON.stringify({ i }));
    })();

    const into = openSqlite(":memory:");
    migrate(into);
    into.prepare("INSERT INTO documents (kind, id, owner, created_at, data) VALUES ('gone', 'x', NULL, 0, '{}')").run();
    await copyImage(source, into);
    source.close();

    const items = into.prepare<[], { item: string }>("SELECT item FROM stream_chunks").all().map((r) => (JSON.parse(r.item) as { i: number }).i);
    expect(items.sort((a, b) => a - b)).toEqual(Array.from({ length: 2_345 }, (_, i) => i));
    const docs = into.prepare<[], { data: string }>("SELECT data FROM documents").all().map((r) => (JSON.parse(r.data) as { i: number }).i);
    expect(docs.sort((a, b) => a - b)).toEqual(Array.from({ length: 2_101 }, (_, i) => i));
    into.close();
  });
});
