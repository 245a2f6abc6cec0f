import { open } from "node:fs/promises";
import { createRequire } from "node:module";
import Database from "better-sqlite3";

export type Db = Database.Database;

/**
 * better-sqlite3's databases, statements and iterators are native objects (`node::ObjectWrap`).
 * From Node 24.19 such an object freed by a garbage collection that runs outside JavaScript (an
 * idle collection, or one as the process exits) aborts the process
 * (`RemoveEnvironmentCleanupHook: Assertion failed: (env) != nullptr`, in `Statement::~Statement`).
 * better-sqlite3 13 no longer wraps them so, but it needs Node 22, and minipod runs on Node 20.
 *
 * So none of them ever becomes garbage: every database opened here is kept for the life of the
 * process (closed when its emulator is done with it, which frees SQLite's memory), each statement
 * is prepared once per database and SQL text and kept with its database, pragmas are read through
 * those statements (`pragmaValue`) or set with `exec`, and no iterator is made (`.all()` instead).
 * What is kept is the JavaScript objects of closed databases and their finalized statements, a few
 * kilobytes per database opened, and each finished backup's object (`backupInSteps`). test/architecture.test.ts keeps other files from opening
 * databases, reading pragmas or iterating themselves.
 */
const kept = new Set<Db>();
const statementsOf = new WeakMap<Db, Map<string, Database.Statement>>();

/** Opens a database (a file, `:memory:`, or a serialized image) whose statements are kept. */
export function openSqlite(source: string | Buffer): Db {
  const db = new Database(source);
  kept.add(db);
  const prepare = db.prepare.bind(db);
  const statements = new Map<string, Database.Statement>();
  statementsOf.set(db, statements);
  db.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  }) as Db["prepare"];
  return db;
}

/** The value of a pragma that has one (`user_version`, `page_size`), through a kept statement. */
export function pragmaValue(db: Db, name: string): unknown {
  return db.prepare(`PRAGMA ${name}`).pluck(true).get();
}

/** How many statements `db` keeps: bounded by the SQL texts minipod writes, whatever the traffic. */
export function keptStatements(db: Db): number {
  return statementsOf.get(db)?.size ?? 0;
}

/** The statements kept by the databases still open in this process. */
export function keptStatementsOfOpenDatabases(): number {
  let n = 0;
  for (const db of kept) if (db.open) n += keptStatements(db);
  return n;
}

/** better-sqlite3's native backup object (what `db.backup()` steps through, then drops). */
interface NativeBackup {
  transfer(pages: number): { totalPages: number; remainingPages: number };
  close(): void;
}
type NativeDb = { backup(db: Db, attached: string, file: string, removeUnlessDone: boolean): NativeBackup };
// The symbol under which a Database holds its native half: `db.backup()` would leave its backup
// object to the garbage collector, so the steps are taken here with the object kept.
const { cppdb } = createRequire(import.meta.url)("better-sqlite3/lib/util.js") as { cppdb: symbol };
const keptBackups: NativeBackup[] = [];

/**
 * Copies `db` into the new file `file` with SQLite's online backup, `pages` pages a step, the event
 * loop free between steps. Writes made through `db` meanwhile reach the copy as well, so the file
 * holds the whole state as it was at the last step. The file is removed if the copy fails. The last
 * step commits the copy, which waits for the disk: what was written is synced off the loop first,
 * so that it waits only for that step's pages.
 *
 * An in-memory database cannot pass its writes on: each write starts the copy over. The first
 * time it does, `restarted` is called (the export then puts off the writes of the turns to come,
 * see WriteBehind.defer); each time it does again, the steps grow fourfold, and the copy ends
 * however steady the writes (in the end, in one step).
 */
export async function backupInSteps(db: Db, file: string, pages: number, restarted: () => void = () => {}): Promise<void> {
  const backup = (db as unknown as Record<symbol, NativeDb>)[cppdb]!.backup(db, "main", file, true);
  keptBackups.push(backup);
  try {
    let step = pages;
    let before = Infinity;
    let restarts = 0;
    for (let left = backup.transfer(step).remainingPages; left > 0; left = backup.transfer(step).remainingPages) {
      if (left >= before && restarts++ === 0) restarted();
      else if (left >= before) step = Math.min(step * 4, 0x7fffffff);
      before = left;
      if (left <= step) await syncFile(file);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    backup.close();
  }
}

async function syncFile(file: string): Promise<void> {
  const handle = await open(file, "r+");
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
