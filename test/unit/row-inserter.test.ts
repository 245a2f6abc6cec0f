import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { RowInserter } from "../../src/store/row-inserter.js";

describe("RowInserter", () => {
  it("inserts any number of rows, in order, in statements of most, most / 2, ... rows", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (seq INTEGER PRIMARY KEY, a TEXT, b INTEGER)");
    const inserter = new RowInserter<{ a: string; b: number }>(db, "t", "a, b", (r, out, at) => void ((out[at] = r.a), (out[at + 1] = r.b)), 8);
    const statements: number[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const st = prepare(sql);
      const run = st.run.bind(st);
      st.run = ((...args: unknown[]) => {
        statements.push((sql.match(/\(\?, \?\)/g) ?? []).length);
        return run(...args);
      }) as typeof st.run;
      return st;
    }) as typeof db.prepare;
    let n = 0;
    for (const count of [0, 1, 7, 8, 21]) {
      statements.length = 0;
      const rows = Array.from({ length: count }, () => ({ a: `r${n}`, b: n++ }));
      inserter.insert(rows);
      expect(statements.reduce((x, y) => x + y, 0)).toBe(count);
      if (count === 21) expect(statements).toEqual([8, 8, 4, 1]);
      if (count === 7) expect(statements).toEqual([4, 2, 1]);
    }
    const all = db.prepare("SELECT a, b FROM t ORDER BY seq").all() as Array<{ a: string; b: number }>;
    expect(all.map((r) => r.b)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(() => new RowInserter(db, "t", "a, b", () => {}, 6)).toThrow(/power of two/);
  });

  it("writes rows into one parameter array per statement size, which keeps nothing of them afterwards", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE t (seq INTEGER PRIMARY KEY, a TEXT, b INTEGER)");
    const inserter = new RowInserter<{ a: string; b: number }>(db, "t", "a, b", (r, out, at) => void ((out[at] = r.a), (out[at + 1] = r.b)), 4);
    const params = () => [...(inserter as unknown as { statements: Map<number, { args: unknown[] }> }).statements.values()].map((s) => s.args);
    inserter.insert(Array.from({ length: 7 }, (_, i) => ({ a: "x".repeat(1000) + i, b: i })));
    const first = params();
    expect(first.map((a) => a.length).sort()).toEqual([2, 4, 8]);
    inserter.insert(Array.from({ length: 7 }, (_, i) => ({ a: `y${i}`, b: i })));
    expect(params()).toEqual(first);
    params().forEach((a, i) => expect(a).toBe(first[i]));
    for (const a of params()) expect(a.every((v) => v === null)).toBe(true);
    expect((db.prepare("SELECT COUNT(*) AS n FROM t").get() as { n: number }).n).toBe(14);
  });
});
