import { describe, expect, it } from "vitest";
import { createEmulator } from "../../src/index.js";
import { keptStatements, keptStatementsOfOpenDatabases, openSqlite, pragmaValue } from "../../src/store/sqlite.js";

// From Node 24.19 a better-sqlite3 statement or database freed by a collection outside JavaScript
// aborts the process (src/store/sqlite.ts): none may become garbage, and the kept ones stay few.

describe("databases whose statements are kept", () => {
  it("prepares a statement once per SQL text, and reads pragmas through kept statements", () => {
    const db = openSqlite(":memory:");
    db.exec("CREATE TABLE t (x)");
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 100; i++) db.prepare("INSERT INTO t VALUES (?)").run(i);
    expect(db.prepare("INSERT INTO t VALUES (?)")).toBe(insert);
    expect(db.prepare("SELECT COUNT(*) AS n FROM t").get()).toEqual({ n: 100 });
    db.exec("PRAGMA user_version = 7");
    expect(pragmaValue(db, "user_version")).toBe(7);
    expect(pragmaValue(db, "user_version")).toBe(7);
    expect(keptStatements(db)).toBe(3);
    db.close();
  });

  it("an emulator's statements are bounded by the kinds of request, not by their number", async () => {
    const emu = await createEmulator({ port: 0, clock: "manual", config: { rateLimits: { enabled: false }, endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
    const h = { authorization: "Bearer k", "content-type": "application/json" };
    const round = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const r = (await (await fetch(`${emu.url}/v2/echo/run`, { method: "POST", headers: h, body: JSON.stringify({ input: { n, i, text: "x".repeat(n * 100) } }) })).json()) as { id: string };
        ids.push(r.id);
      }
      await emu.runUntilIdle();
      for (const id of ids) expect((await fetch(`${emu.url}/v2/echo/status/${id}`, { headers: h })).status).toBe(200);
      await fetch(`${emu.url}/v2/echo/runsync`, { method: "POST", headers: h, body: JSON.stringify({ input: { n } }) });
      for (const q of [`status=${200 + n}`, "operation=run", `endpoint=echo&limit=${n + 1}`, ""]) {
        expect((await fetch(`${emu.url}/_emulator/requests?${q}`)).status).toBe(200);
      }
      await fetch(`${emu.url}/v2/echo/purge-queue`, { method: "POST", headers: h });
      await fetch(`${emu.url}/v2/echo/health`, { headers: h });
    };
    try {
      await round(1);
      const first = keptStatementsOfOpenDatabases();
      expect(first).toBeGreaterThan(20);
      // Ten more rounds: 50 jobs, 40 journal queries of other values. A statement per id or value
      // would add dozens; a few more appear only as batched writes take other sizes and fields.
      for (let n = 2; n <= 11; n++) await round(n);
      expect(keptStatementsOfOpenDatabases() - first).toBeLessThan(10);
    } finally {
      await emu.close();
    }
  });
});
