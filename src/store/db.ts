import Database from "better-sqlite3";
import { MIGRATIONS } from "./migrations.js";

export type Db = Database.Database;

/**
 * Opens the database (`:memory:` or a file), applies the pragmas and migrations. A file database
 * uses WAL so readers never wait for the writer, and takes an exclusive lock file so that two
 * emulators never share one file.
 */
export function openDb(file: string): Db {
  const db = new Database(file);
  db.pragma("foreign_keys = ON");
  if (file !== ":memory:") {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 0");
  }
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this minipod understands (${MIGRATIONS.length}); use a newer minipod or another --db file`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
