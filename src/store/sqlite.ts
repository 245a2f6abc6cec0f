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
 * kilobytes per database opened. test/architecture.test.ts keeps other files from opening
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
