import { EmulatorError } from "../domain/errors.js";
import { dropShadowTables, migrate, REPLACED_PREFIX, SHADOW_PREFIX } from "./db.js";
import { MIGRATIONS } from "./migrations.js";
import { SlicePace, type Stopwatch } from "./slice-pace.js";
import { openSqlite, pragmaValue, type Db } from "./sqlite.js";

const MB = 1024 * 1024;
/**
 * Pages the WAL may hold before a commit checkpoints it, while a copy fills shadow tables: a
 * checkpoint of SQLite's default thousand pages (4 MB) took 20 to 45 ms of one turn, one of 256
 * pages 10 to 20 ms (bench/RESULTS-restore.md).
 */
const COPY_CHECKPOINT_PAGES = 256;

export function tables(db: Db): string[] {
  return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as { name: string }[]).map((r) => r.name);
}

export function columns(db: Db, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
}

/** The columns that order a table's rows one way only: its rowid, or a WITHOUT ROWID table's primary key. */
export function keyColumns(db: Db, t: string): string[] {
  const sql = db.prepare<[string], { sql: string | null }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).get(t)?.sql ?? "";
  if (!/WITHOUT\s+ROWID/i.test(sql)) return ["rowid"];
  return db.prepare<[string], { name: string }>(`SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`).all(t).map((r) => `"${r.name}"`);
}

/** Bytes a database takes (its pages). */
export function databaseBytes(db: Db): number {
  return (pragmaValue(db, "page_count") as number) * (pragmaValue(db, "page_size") as number);
}

/**
 * Checks that `from` is a minipod state image this schema can take, and brings an earlier
 * release's to this schema (in place: `from` must be a copy of the user's). Refuses with 400,
 * naming the problem, a file that is no SQLite database, a database of another program, one of
 * a newer minipod, and (413) one larger than `maxBytes`, before anything of the live state changes.
 */
export function checkImage(from: Db, maxBytes: number | undefined): void {
  let version: number;
  try {
    from.prepare("SELECT 1 FROM sqlite_master LIMIT 1").get();
    version = pragmaValue(from, "user_version") as number;
  } catch (e) {
    throw new EmulatorError("BAD_REQUEST", `not a minipod state file (SQLite database): ${(e as Error).message}`);
  }
  if (version === 0 || !tables(from).includes("jobs")) {
    throw new EmulatorError("BAD_REQUEST", "not a minipod state file: a SQLite database, but not one minipod wrote (no schema version, no jobs table); export one with `minipod export FILE`");
  }
  if (version > MIGRATIONS.length) {
    throw new EmulatorError("BAD_REQUEST", `state file of schema version ${version}, newer than this minipod understands (${MIGRATIONS.length}): import it with a newer minipod`);
  }
  if (maxBytes !== undefined && databaseBytes(from) > maxBytes) {
    throw new EmulatorError(
      "PAYLOAD_TOO_LARGE",
      `the state takes ${(databaseBytes(from) / MB).toFixed(1)} MB, over the in-memory database's bound (memory.databaseBytes, ${(maxBytes / MB).toFixed(1)} MB): raise it in the config, or use a --db file`,
    );
  }
  if (version < MIGRATIONS.length) {
    try {
      migrate(from);
    } catch (e) {
      throw new EmulatorError("BAD_REQUEST", `state file of schema version ${version} could not be brought to version ${MIGRATIONS.length}: ${(e as Error).message}`);
    }
  }
}

/**
 * Replaces `to`'s rows with `from`'s, in turns of about 10 ms with the event loop free between
 * them (store/slice-pace.ts, measured on `now`). What else runs must not write `to` meanwhile (a restore holds every request; an
 * import runs before the emulator serves). A failure leaves `to` as it was. `from` has been
 * through `checkImage`.
 *
 * A file database is filled in shadow tables, each slice its own small transaction (so the WAL,
 * checkpointed every thousand pages, never holds more than a few slices), then the shadow tables
 * replace the live ones in one short transaction (`swapIn`): a process killed before it finds the
 * old state on its next start (the shadow tables are dropped, `dropShadowTables`), after it the
 * new. An in-memory database is copied in one transaction across the slices (its old rows deleted
 * first): shadow tables would hold both states at once under its `memory.databaseBytes` bound.
 */
export async function copyImage(from: Db, to: Db, how: CopyWay = to.memory ? "one transaction" : "shadows", now?: Stopwatch): Promise<void> {
  if (how === "shadows") return copyThroughShadows(from, to, now);
  const target = tables(to);
  const shared = tables(from).filter((t) => target.includes(t));
  const pace = new SlicePace(now);
  to.exec("BEGIN");
  try {
    for (const t of target) {
      if (keyColumns(to, t)[0] !== "rowid") {
        to.prepare(`DELETE FROM "${t}"`).run();
        if (pace.due()) await pace.turn();
        continue;
      }
      await empty(to, t, pace);
    }
    for (const t of shared) await copyTable(from, to, t, t, pace);
    to.exec("COMMIT");
  } catch (e) {
    if (to.inTransaction) to.exec("ROLLBACK");
    throw e;
  }
}

/** How `copyImage` copies (the other way is there to be measured against: bench/restore-db.ts). */
export type CopyWay = "shadows" | "one transaction";

interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

async function copyThroughShadows(from: Db, to: Db, now: Stopwatch | undefined): Promise<void> {
  const target = tables(to);
  const shared = new Set(tables(from).filter((t) => target.includes(t)));
  // Each turn commits before the loop is let go, and a new transaction begins with the next.
  const pace = new SlicePace(
    now,
    undefined,
    () => to.exec("COMMIT"),
    () => to.exec("BEGIN"),
  );
  dropShadowTables(to);
  const checkpointPages = pragmaValue(to, "wal_autocheckpoint") as number;
  to.exec(`PRAGMA wal_autocheckpoint = ${COPY_CHECKPOINT_PAGES}`);
  to.exec("BEGIN");
  try {
    for (const t of target) {
      const sql = schemaOf(to).find((r) => r.type === "table" && r.name === t)!.sql!;
      to.exec(sql.replace(/^(CREATE\s+TABLE\s+)("[^"]+"|\S+)/i, `$1"${SHADOW_PREFIX}${t}"`));
      if (shared.has(t)) await copyTable(from, to, t, SHADOW_PREFIX + t, pace);
    }
    to.exec("COMMIT");
    swapIn(to, target);
  } catch (e) {
    if (to.inTransaction) to.exec("ROLLBACK");
    dropShadowTables(to);
    to.exec(`PRAGMA wal_autocheckpoint = ${checkpointPages}`);
    throw e;
  }
  // The new state is in: what is left is freeing the old one's pages. Should that fail, the
  // tables replaced are dropped by the next restore or the next start.
  try {
    to.exec("BEGIN");
    for (const t of target) await empty(to, REPLACED_PREFIX + t, pace);
    to.exec("COMMIT");
    for (const t of target) to.exec(`DROP TABLE "${REPLACED_PREFIX}${t}"`);
  } catch {
    if (to.inTransaction) to.exec("ROLLBACK");
  } finally {
    to.exec(`PRAGMA wal_autocheckpoint = ${checkpointPages}`);
  }
}

/**
 * In one transaction: the live tables' indexes and triggers dropped, the live tables renamed out
 * of the way (`REPLACED_PREFIX`: dropping them here would walk every page of the old state), the
 * shadow tables renamed in their place, and the indexes and triggers made again as the schema had
 * them. An AUTOINCREMENT table keeps counting from the higher of its old and new counters, as rows
 * deleted in place would have kept it.
 */
function swapIn(to: Db, target: string[]): void {
  const schema = schemaOf(to);
  const extras = schema.filter((r) => (r.type === "index" || r.type === "trigger") && r.sql !== null && target.includes(r.tbl_name));
  const hasSequence = schema.some((r) => r.type === "table" && r.name === "sqlite_sequence");
  const sequences = hasSequence ? to.prepare<[], { name: string; seq: number }>("SELECT name, seq FROM sqlite_sequence").all() : [];
  to.exec("BEGIN IMMEDIATE");
  try {
    for (const r of extras) to.exec(`DROP ${r.type === "index" ? "INDEX" : "TRIGGER"} "${r.name}"`);
    for (const t of target) to.exec(`ALTER TABLE "${t}" RENAME TO "${REPLACED_PREFIX}${t}"`);
    for (const t of target) to.exec(`ALTER TABLE "${SHADOW_PREFIX}${t}" RENAME TO "${t}"`);
    for (const r of extras) to.exec(r.sql!);
    for (const { name, seq } of sequences) {
      if (!target.includes(name)) continue;
      to.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?").run(seq, name);
      to.prepare("INSERT INTO sqlite_sequence (name, seq) SELECT ?, ? WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)").run(name, seq, name);
    }
    to.exec("COMMIT");
  } catch (e) {
    if (to.inTransaction) to.exec("ROLLBACK");
    throw e;
  }
}

/** Deletes a table's rows by statements sized to the turn, in key order (the caller's transaction may commit with each turn). */
async function empty(to: Db, t: string, pace: SlicePace): Promise<void> {
  const now = pace.now;
  const key = keyColumns(to, t).join(", ");
  pace.restart();
  const del = to.prepare(`DELETE FROM "${t}" WHERE (${key}) IN (SELECT ${key} FROM "${t}" ORDER BY ${key} LIMIT ?)`);
  for (let n = pace.rows(); ; n = pace.rows()) {
    const started = now();
    const gone = del.run(n).changes;
    await pace.after(gone, now() - started);
    if (gone < n) return;
  }
}

function schemaOf(db: Db): SchemaRow[] {
  return db.prepare<[], SchemaRow>("SELECT type, name, tbl_name, sql FROM sqlite_master").all();
}

async function copyTable(from: Db, to: Db, t: string, into: string, pace: SlicePace): Promise<void> {
  const now = pace.now;
  const targetColumns = columns(to, into);
  const cols = columns(from, t).filter((c) => targetColumns.includes(c));
  const list = cols.map((c) => `"${c}"`).join(", ");
  pace.restart();
  const insert = to.prepare(`INSERT INTO "${into}" (${list}) VALUES (${cols.map(() => "?").join(", ")})`);
  // A page of rows at a time, in key order: a table's rows are never all in memory at once (and no
  // iterator object is left for the garbage collector: see store/sqlite.ts). The turn ends after
  // the row that spent it; the rest of the page waits for the next.
  const key = keyColumns(from, t);
  const keys = key.join(", ");
  const first = from.prepare(`SELECT ${keys}, ${list} FROM "${t}" ORDER BY ${keys} LIMIT ?`).raw(true);
  const next = from.prepare(`SELECT ${keys}, ${list} FROM "${t}" WHERE (${keys}) > (${key.map(() => "?").join(", ")}) ORDER BY ${keys} LIMIT ?`).raw(true);
  let page: unknown[][] = [];
  let at = 0;
  let last = false;
  for (;;) {
    const started = now();
    if (at === page.length) {
      if (last) return;
      const n = pace.rows();
      const after = page.at(-1);
      page = (after === undefined ? first.all(n) : next.all(...after.slice(0, key.length), n)) as unknown[][];
      at = 0;
      last = page.length < n;
      if (page.length === 0) return;
    }
    const begun = at;
    while (at < page.length) {
      insert.run(...page[at]!.slice(key.length));
      at++;
      if (pace.due()) break;
    }
    pace.measured(at - begun, now() - started);
    if (pace.due()) await pace.turn();
  }
}

/** A copy overtaken by a write to the database it copies: made again. */
class Overtaken extends Error {}

/** Copies of a save that may start over (the database written meanwhile) before one is made in one turn. */
const IMAGE_TRIES_IN_STEPS = 2;

/**
 * A copy of `from` in a new in-memory database (a snapshot's image, never written to a file), made
 * in turns of about 10 ms with the event loop free between them (store/slice-pace.ts, measured on
 * `now`): its schema (tables, indexes, triggers, the schema version), every table's rows, and the
 * AUTOINCREMENT counters. It holds `from` as it was when it began: should anything write `from`
 * meanwhile (SQLite's count of the connection's changes moves between two turns), the copy is
 * dropped and made again, the third time in one turn, so that it never holds part of a write.
 * `from` is only read. A failure leaves nothing behind.
 */
export async function imageOf(from: Db, now?: Stopwatch): Promise<Db> {
  const changes = from.prepare("SELECT total_changes()").pluck(true);
  for (let attempt = 1; ; attempt++) {
    const before = changes.get();
    const overtaken = () => {
      if (changes.get() !== before) throw new Overtaken();
    };
    const pace = new SlicePace(now, attempt <= IMAGE_TRIES_IN_STEPS ? undefined : Infinity, undefined, overtaken);
    const to = openSqlite(":memory:");
    try {
      to.exec(`PRAGMA page_size = ${pragmaValue(from, "page_size") as number}; PRAGMA user_version = ${pragmaValue(from, "user_version") as number}`);
      const schema = schemaOf(from).filter((r) => r.sql !== null && !r.name.startsWith("sqlite_"));
      to.exec("BEGIN");
      for (const r of schema.filter((r) => r.type === "table")) to.exec(r.sql!);
      for (const r of schema.filter((r) => r.type !== "table")) to.exec(r.sql!);
      for (const t of tables(from)) await copyTable(from, to, t, t, pace);
      if (schemaOf(from).some((r) => r.type === "table" && r.name === "sqlite_sequence")) {
        const sequences = from.prepare<[], { name: string; seq: number }>("SELECT name, seq FROM sqlite_sequence").all();
        to.exec("DELETE FROM sqlite_sequence");
        for (const { name, seq } of sequences) to.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)").run(name, seq);
      }
      to.exec("COMMIT");
      return to;
    } catch (e) {
      to.close();
      if (!(e instanceof Overtaken)) throw e;
    }
  }
}
