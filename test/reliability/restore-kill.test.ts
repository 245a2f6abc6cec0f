// A restore or import into a --db file killed (kill -9) at any point leaves, on the next start,
// either the state before it or the state it copied, whole: never a mix, and no table of its own.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, openDb, SHADOW_PREFIX } from "../../src/store/db.js";
import { openSqlite } from "../../src/store/sqlite.js";

const CHILD = join(import.meta.dirname, "../support/restore-child.ts");
const OLD = 50;
const NEW = 3_000;

/** Starts the copy and kills it once its stdout has shown `line`; resolves with what it printed. */
function killAt(db: string, image: string, line: string): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CHILD, db, image], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no "${line}" within 30 s; stdout: ${out.slice(-200)}; stderr: ${err.slice(-500)}`));
    }, 30_000);
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.split("\n").includes(line)) {
        clearTimeout(timer);
        child.kill("SIGKILL");
      }
    });
    child.on("exit", () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/** The kinds of documents the file holds, and its tables a restore fills (on a read that does not clean them). */
function state(file: string): { kinds: Record<string, number>; shadows: number } {
  const db = openSqlite(file);
  try {
    const shadows = (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE ?").get(`${SHADOW_PREFIX}%`) as { n: number }).n;
    const rows = db.prepare<[], { kind: string; n: number }>("SELECT kind, count(*) AS n FROM documents GROUP BY kind").all();
    return { kinds: Object.fromEntries(rows.map((r) => [r.kind, r.n])), shadows };
  } finally {
    db.close();
  }
}

describe("a restore into a --db file killed with kill -9", () => {
  let dir: string;
  let base: string;
  let image: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "minipod-restore-kill-"));
    base = join(dir, "base.db");
    const db = openDb(base);
    const doc = db.prepare("INSERT INTO documents (kind, id, owner, created_at, data) VALUES ('old', ?, NULL, 0, '{}')");
    for (let i = 0; i < OLD; i++) doc.run(`o-${i}`);
    db.close();
    image = join(dir, "image.db");
    const img = openSqlite(image);
    migrate(img);
    const next = img.prepare("INSERT INTO documents (kind, id, owner, created_at, data) VALUES ('new', ?, NULL, 0, ?)");
    img.transaction(() => {
      for (let i = 0; i < NEW; i++) next.run(`n-${i}`, JSON.stringify({ pad: "x".repeat(10_000) }));
    })();
    img.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(["turn 1", "turn 2", "turn 4", "done"])("at %s, leaves the old state or the new one whole", async (line) => {
    const file = join(dir, `${line.replace(" ", "-")}.db`);
    copyFileSync(base, file);
    const out = await killAt(file, image, line);
    expect(out).toContain(line);
    const after = state(file);
    if (line === "done") expect(after.kinds).toEqual({ new: NEW });
    // Killed while it copies (a 30 MB image takes more than ten turns): the old state, and the
    // tables it was filling.
    else expect(after).toMatchObject({ kinds: { old: OLD }, shadows: expect.any(Number) as number });
    if (line !== "done") expect(after.shadows).toBeGreaterThan(0);
    // The next start drops what the killed copy left, and finds the same state.
    const reopened = openDb(file);
    reopened.close();
    expect(state(file)).toEqual({ kinds: after.kinds, shadows: 0 });
  });
});
