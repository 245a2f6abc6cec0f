import { MIGRATIONS } from "./migrations.js";
import { openSqlite, pragmaValue, type Db } from "./sqlite.js";

export type { Db } from "./sqlite.js";

/**
 * Opens the database (`:memory:` or a file), applies the pragmas and migrations. A file database
 * uses WAL and is held with an exclusive lock for as long as it is open, so that two emulators
 * never share one file: the second is refused at start with a clear message.
 */
export function openDb(file: string): Db {
  const db = openSqlite(file);
  try {
    db.exec("PRAGMA foreign_keys = ON");
    // SQLite's default page size (4 KiB), in memory too. 16 KiB pages wrote a 10 MB payload in
    // fewer overflow pages (a few ms less), but a transaction copies each page it first changes
    // whole into its journal, and every turn's transaction changes the same few pages of the jobs
    // table and its indexes: a job row cost 1.5 to 2.3 µs more in turns of two to four jobs,
    // about 3 % of the CPU of a `POST /run` (bench/PROFILING.md).
    if (file !== ":memory:") lockFile(db);
    dropShadowTables(db);
    migrate(db);
  } catch (e) {
    db.close();
    if (isBusy(e)) throw new Error(`database ${file} is in use by another minipod process; stop it first, or start this one with another --db file`, { cause: e });
    throw e;
  }
  return db;
}

/**
 * Takes the file for this process alone. The locking mode comes before WAL so that SQLite keeps
 * the WAL index in process memory (no -shm sharing), and the immediate write transaction takes
 * the lock now, not at the first write, which it then keeps until the connection closes. With no
 * busy timeout a second process fails at once with SQLITE_BUSY instead of waiting.
 */
function lockFile(db: Db): void {
  db.exec("PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  db.exec("BEGIN IMMEDIATE; COMMIT;");
}

function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" || code === "SQLITE_BUSY_SNAPSHOT";
}

/** The prefix of the tables a restore into a file database fills before it swaps them in (store/image-copy.ts). */
export const SHADOW_PREFIX = "minipod_restore_";
/** The prefix the tables a restore replaced take until they are emptied and dropped, after the swap. */
export const REPLACED_PREFIX = "minipod_replaced_";

/**
 * Drops the tables a restore or import left when the process died (kill -9, power loss): those
 * it was filling had not been swapped in, so the database holds the state from before it, whole;
 * those it had replaced (the swap was made) hold the state from before it, no longer read.
 */
export function dropShadowTables(db: Db): void {
  const left = db
    .prepare<[number, string, number, string], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND (substr(name, 1, ?) = ? OR substr(name, 1, ?) = ?)`)
    .all(SHADOW_PREFIX.length, SHADOW_PREFIX, REPLACED_PREFIX.length, REPLACED_PREFIX);
  for (const { name } of left) db.exec(`DROP TABLE "${name}"`);
}

/** Applies the migrations `db` has not had yet (refuses a database of a newer schema). */
export function migrate(db: Db): void {
  const current = pragmaValue(db, "user_version") as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this minipod understands (${MIGRATIONS.length}); use a newer minipod or another --db file`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    })();
  }
}

/**
 * Bounds an in-memory database to about `bytes` (`memory.databaseBytes`): past it, a write fails
 * with SQLITE_FULL, answered 507 as a full disk is. Deleted rows free their pages for reuse, so
 * the bound holds however long minipod runs.
 */
export function boundMemoryDb(db: Db, bytes: number): void {
  const pageSize = pragmaValue(db, "page_size") as number;
  db.exec(`PRAGMA max_page_count = ${Math.max(1, Math.floor(bytes / pageSize))}`);
}
