import { SNAPSHOTS_MAX_BYTES_DEFAULT, SNAPSHOTS_MAX_COUNT_DEFAULT } from "../domain/bounds.js";
import type { VirtualClock } from "../domain/clock.js";
import { EmulatorError } from "../domain/errors.js";
import { isSecretName, redact, REDACTED, shownUrl } from "../domain/redact.js";
import { migrate, type Db } from "../store/db.js";
import { MIGRATIONS } from "../store/migrations.js";
import { openSqlite, pragmaValue } from "../store/sqlite.js";

export interface SnapshotInfo {
  name: string;
  /** Virtual time when it was taken. */
  at: number;
  bytes: number;
}

/**
 * SQLite's serialisation of a WAL database says "WAL" in its header (bytes 18 and 19), and an
 * image in memory cannot be opened in WAL mode. Marking it as a rollback-journal database makes
 * it openable (and a valid file to write out); the content is the same.
 */
function openable(image: Buffer): Buffer {
  if (image.length > 19) {
    image[18] = 1;
    image[19] = 1;
  }
  return image;
}

/** How many snapshots, and how many bytes of them, may be held at once (`snapshots` of the config). */
export interface SnapshotBounds {
  maxCount: number;
  maxBytes: number;
}

const MB = 1024 * 1024;
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

/**
 * Named snapshots of the whole state: SQLite's own serialisation of the database (a backup image,
 * not a walk over objects), held in memory so that no file with secrets in it is written. Restore
 * copies every table back into the live database in one transaction, then the emulator rebuilds
 * its timers and workers from it.
 */
export class Snapshots {
  private readonly images = new Map<string, { image: Buffer; at: number }>();

  constructor(
    private readonly db: Db,
    private readonly clock: VirtualClock,
    /**
     * Restores: stops what runs, calls `load` (which replaces the database's rows with the
     * snapshot's), then rebuilds timers, workers and queue positions from it (lifecycle.ts).
     */
    private readonly restoreWith: (load: () => void, at: number) => Promise<void>,
    /** Writes everything held back (for the end of the turn, or until needed), so the image is complete. */
    private readonly flush: () => void = () => {},
    readonly bounds: SnapshotBounds = { maxCount: SNAPSHOTS_MAX_COUNT_DEFAULT, maxBytes: SNAPSHOTS_MAX_BYTES_DEFAULT },
  ) {}

  list(): SnapshotInfo[] {
    return [...this.images].map(([name, s]) => ({ name, at: s.at, bytes: s.image.byteLength }));
  }

  /** Bytes held by every snapshot. */
  totalBytes(): number {
    let total = 0;
    for (const s of this.images.values()) total += s.image.byteLength;
    return total;
  }

  /**
   * Saves the whole state under `name`, replacing a snapshot of that name. Refused with 409,
   * keeping what is held, when it would pass `bounds`: each snapshot is a full copy of the
   * database in memory.
   */
  save(name: string): SnapshotInfo {
    const replaced = this.images.get(name);
    const { maxCount, maxBytes } = this.bounds;
    const free = `delete one with DELETE /_emulator/snapshots/{name} (held: ${[...this.images.keys()].join(", ")})`;
    if (!replaced && this.images.size >= maxCount) {
      throw new EmulatorError(
        "CONFLICT",
        `snapshot "${name}" not saved: ${this.images.size} snapshots are held, the most snapshots.maxCount allows (${maxCount}); ${free}, save under one of their names, or raise snapshots.maxCount in the config`,
      );
    }
    this.flush();
    const image = openable(this.db.serialize());
    const others = this.totalBytes() - (replaced?.image.byteLength ?? 0);
    if (others + image.byteLength > maxBytes) {
      throw new EmulatorError(
        "CONFLICT",
        `snapshot "${name}" not saved: it takes ${mb(image.byteLength)} and the other snapshots ${mb(others)}, over snapshots.maxBytes (${mb(maxBytes)}); ${others > 0 ? `${free}, or raise` : "raise"} snapshots.maxBytes in the config`,
      );
    }
    const at = this.clock.now();
    this.images.set(name, { image, at });
    return { name, at, bytes: image.byteLength };
  }

  async restore(name: string): Promise<SnapshotInfo> {
    const snap = this.images.get(name);
    if (!snap) throw new EmulatorError("NOT_FOUND", `no snapshot named "${name}"; saved: ${[...this.images.keys()].join(", ") || "none"}`);
    // Rows still held back (stopping the workers may have written some) go in first, so that the
    // image replaces them too rather than their being written on top of it afterwards.
    await this.restoreWith(() => {
      this.flush();
      loadImage(snap.image, this.db);
    }, snap.at);
    return { name, at: snap.at, bytes: snap.image.byteLength };
  }

  delete(name: string): boolean {
    return this.images.delete(name);
  }

  /** The database as a file image for `minipod export`, with every secret redacted. */
  exportImage(): Buffer {
    this.flush();
    const copy = openSqlite(openable(this.db.serialize()));
    try {
      // An UPDATE would leave the old values in the file's free space: zeroed as they are freed.
      copy.exec("PRAGMA secure_delete = ON");
      redactSecrets(copy);
      return openable(copy.serialize());
    } finally {
      copy.close();
    }
  }
}

function tables(db: Db): string[] {
  return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).all() as { name: string }[]).map((r) => r.name);
}

function columns(db: Db, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
}

/** Replaces the live database's rows with those of a SQLite image (a snapshot or an export). */
export function loadImage(image: Buffer, into: Db): void {
  let from: Db;
  try {
    from = openSqlite(openable(Buffer.from(image)));
    from.prepare("SELECT 1 FROM sqlite_master LIMIT 1").get();
  } catch (e) {
    throw new EmulatorError("BAD_REQUEST", `not a minipod state file (SQLite database): ${(e as Error).message}`);
  }
  // A file an earlier release exported has that release's tables: brought to this schema first
  // (in memory), so that what moved between tables comes along.
  const version = pragmaValue(from, "user_version") as number;
  if (version > 0 && version < MIGRATIONS.length) {
    try {
      migrate(from);
    } catch (e) {
      from.close();
      throw new EmulatorError("BAD_REQUEST", `state file of schema version ${version} could not be brought to version ${MIGRATIONS.length}: ${(e as Error).message}`);
    }
  }
  copyAll(from, into);
}

/** Replaces the live database's rows with the image's, table by table, in one transaction. */
function copyAll(from: Db, to: Db): void {
  try {
    const shared = tables(from).filter((t) => tables(to).includes(t));
    to.transaction(() => {
      for (const t of tables(to)) to.prepare(`DELETE FROM "${t}"`).run();
      for (const t of shared) {
        const cols = columns(from, t).filter((c) => columns(to, t).includes(c));
        const list = cols.map((c) => `"${c}"`).join(", ");
        const insert = to.prepare(`INSERT INTO "${t}" (${list}) VALUES (${cols.map(() => "?").join(", ")})`);
        // A page at a time, in key order: a table's rows are never all in memory at once (and no
        // iterator object is left for the garbage collector: see store/sqlite.ts).
        const key = keyColumns(from, t);
        const keys = key.join(", ");
        const first = from.prepare(`SELECT ${keys}, ${list} FROM "${t}" ORDER BY ${keys} LIMIT ${COPY_PAGE}`).raw(true);
        const next = from.prepare(`SELECT ${keys}, ${list} FROM "${t}" WHERE (${keys}) > (${key.map(() => "?").join(", ")}) ORDER BY ${keys} LIMIT ${COPY_PAGE}`).raw(true);
        for (let page = first.all() as unknown[][]; page.length > 0; page = next.all(...page.at(-1)!.slice(0, key.length)) as unknown[][]) {
          for (const row of page) insert.run(...row.slice(key.length));
          if (page.length < COPY_PAGE) break;
        }
      }
    })();
  } finally {
    from.close();
  }
}

/** Rows a restore reads from the image at once. */
const COPY_PAGE = 1000;

/** The columns that order a table's rows one way only: its rowid, or a WITHOUT ROWID table's primary key. */
function keyColumns(db: Db, t: string): string[] {
  const sql = db.prepare<[string], { sql: string | null }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).get(t)?.sql ?? "";
  if (!/WITHOUT\s+ROWID/i.test(sql)) return ["rowid"];
  return db.prepare<[string], { name: string }>(`SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk`).all(t).map((r) => `"${r.name}"`);
}

function redactSecrets(db: Db): void {
  for (const t of tables(db)) {
    for (const c of columns(db, t)) {
      if (isSecretName(c)) db.prepare(`UPDATE "${t}" SET "${c}" = ? WHERE "${c}" IS NOT NULL`).run(REDACTED);
    }
  }
  // Resources are JSON documents (a registry auth's password, an env's token): every secret-named
  // key at any depth, and the password of any URL with user info, is redacted in each.
  if (tables(db).includes("documents")) {
    const set = db.prepare(`UPDATE documents SET data = ? WHERE kind = ? AND id = ?`);
    for (const r of db.prepare<[], { kind: string; id: string; data: string }>(`SELECT kind, id, data FROM documents`).all()) {
      const data = JSON.stringify(redact(JSON.parse(r.data)));
      if (data !== r.data) set.run(data, r.kind, r.id);
    }
  }
  if (tables(db).includes("jobs")) {
    db.prepare(`UPDATE jobs SET s3_config = json_set(s3_config, '$.accessSecret', '[redacted]') WHERE s3_config IS NOT NULL`).run();
    // Webhook URLs as shown: secret-named query values (a receiver's token) and passwords (refused
    // since; a database of an earlier release may hold some). An import calls them as they are.
    const rows = db.prepare<[], { id: string; webhook: string }>(`SELECT id, webhook FROM jobs WHERE webhook LIKE '%?%' OR webhook LIKE '%://%:%@%'`).all();
    const set = db.prepare(`UPDATE jobs SET webhook = ? WHERE id = ?`);
    for (const r of rows) {
      const shown = shownUrl(r.webhook);
      if (shown !== r.webhook) set.run(shown, r.id);
    }
  }
}
