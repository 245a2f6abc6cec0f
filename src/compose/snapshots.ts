import { copyFile, mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream } from "node:stream/web";
import { SNAPSHOTS_MAX_BYTES_DEFAULT, SNAPSHOTS_MAX_COUNT_DEFAULT } from "../domain/bounds.js";
import type { VirtualClock } from "../domain/clock.js";
import { EmulatorError } from "../domain/errors.js";
import type { Db } from "../store/db.js";
import { checkImage, copyImage, databaseBytes, imageOf } from "../store/image-copy.js";
import { redactSecrets } from "../store/redact-image.js";
import type { Stopwatch } from "../store/slice-pace.js";
import { backupInSteps, openSqlite } from "../store/sqlite.js";

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

/** An export: its size, and the file's bytes as they are read (the file goes when they have been). */
export interface ExportedState {
  bytes: number;
  body: ReadableStream<Uint8Array>;
}

/** Pages (4 KiB) an export copies in one turn of the event loop. */
const EXPORT_STEP_PAGES = 1024;
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

/**
 * Named snapshots of the whole state: SQLite's own serialisation of the database (a backup image,
 * not a walk over objects), each held as an in-memory database of its own so that no file with
 * secrets in it is written. A restore holds every request (`held`), stops what runs, copies every
 * table back into the live database by slices of about 10 ms (store/image-copy.ts), then the
 * emulator rebuilds its timers and workers from it and the requests held go on.
 */
export class Snapshots {
  private readonly images = new Map<string, { image: Db; at: number; bytes: number }>();
  private restoring: Promise<void> | undefined;
  /** A save under way (`saveInSteps`). */
  private saving: Promise<void> | undefined;
  /** The snapshot a restore under way reads. */
  private restoringName: string | undefined;
  /** A reset under way (`resetting`): restores and saves wait for it, as it waits for them. */
  private reset: Promise<void> | undefined;
  /** Exports copying the database: a restore waits for them. */
  private readonly copying = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly clock: VirtualClock,
    /**
     * Restores: stops what runs, calls `load` (which replaces the database's rows with the
     * snapshot's), then rebuilds timers, workers and queue positions from it (lifecycle.ts).
     */
    private readonly restoreWith: (load: () => Promise<void>, at: number) => Promise<void>,
    /** Writes everything held back (for the end of the turn, or until needed), so the image is complete. */
    private readonly flush: () => void = () => {},
    readonly bounds: SnapshotBounds = { maxCount: SNAPSHOTS_MAX_COUNT_DEFAULT, maxBytes: SNAPSHOTS_MAX_BYTES_DEFAULT },
    /** Holds the writes of the turns to come until the function it returns is called (while a restore copies). */
    private readonly holdWrites: () => () => void = () => () => {},
    /** Puts off the end-of-turn writes until the function it returns is called (WriteBehind.defer). */
    private readonly deferWrites: () => () => void = () => () => {},
  ) {}

  /** While a restore or a save (`saveInSteps`) runs: settles (never rejects) when it has ended, and requests may go on. */
  held(): Promise<void> | undefined {
    return this.restoring ?? this.saving;
  }

  /**
   * Runs a reset (`run`, which takes several turns of the event loop) once no restore or save runs,
   * and holds the restores and saves asked meanwhile until it has ended: a reset and a restore or
   * a save never interleave, whichever was asked first. Resets run one at a time.
   */
  async resetting(run: () => Promise<void>): Promise<void> {
    for (let busy = this.held() ?? this.reset; busy; busy = this.held() ?? this.reset) await busy;
    const done = run();
    this.reset = done.then(
      () => {},
      () => {},
    );
    try {
      await done;
    } finally {
      this.reset = undefined;
    }
  }

  list(): SnapshotInfo[] {
    return [...this.images].map(([name, s]) => ({ name, at: s.at, bytes: s.bytes }));
  }

  /** Bytes held by every snapshot. */
  totalBytes(): number {
    let total = 0;
    for (const s of this.images.values()) total += s.bytes;
    return total;
  }

  /**
   * Saves the whole state under `name` in one turn of the event loop (SQLite's serialisation, opened
   * as a database: 0.3 to 0.5 s of CPU for 300 MB), replacing a snapshot of that name. Refused with 409, keeping what is held,
   * when it would pass `bounds`: each snapshot is a full copy of the database in memory. What the
   * control API and `emulator.saveSnapshot` run is `saveInSteps`.
   */
  save(name: string): SnapshotInfo {
    if (this.restoring) throw new EmulatorError("CONFLICT", `snapshot "${name}" not saved: a snapshot is being restored; save once it is`);
    if (this.reset) throw new EmulatorError("CONFLICT", `snapshot "${name}" not saved: the emulator is being reset; save once it is`);
    this.checkCount(name);
    this.flush();
    const bytes = databaseBytes(this.db);
    this.checkBytes(name, bytes);
    // Held as a database (SQLite's copy of the image; the serialisation itself is let go), so that
    // a restore reads it as it is, with no other copy made.
    return this.keep(name, openSqlite(openable(this.db.serialize())), this.clock.now(), bytes);
  }

  /**
   * Saves the whole state under `name` as `save` does, copied by turns of about 10 ms into a new
   * in-memory database (store/image-copy.ts `imageOf`), which replaces a snapshot of that name only
   * once it is whole: a save that fails or is refused leaves the one held as it was. Every request
   * that arrives meanwhile waits for it to end (`held`), the writes of the turns to come are put off
   * until then, and should something write the database all the same the copy starts over, so the
   * snapshot holds the state of the moment the save began, and nothing written after it. Saves run
   * one at a time, after a restore under way.
   */
  async saveInSteps(name: string, now?: Stopwatch): Promise<SnapshotInfo> {
    while (this.restoring || this.saving || this.reset) await (this.restoring ?? this.saving ?? this.reset);
    this.checkCount(name);
    this.flush();
    this.checkBytes(name, databaseBytes(this.db));
    const at = this.clock.now();
    const release = this.deferWrites();
    const copied = imageOf(this.db, now).finally(release);
    this.saving = copied.then(
      () => {},
      () => {},
    );
    let image: Db;
    try {
      image = await copied;
    } finally {
      this.saving = undefined;
    }
    try {
      const bytes = databaseBytes(image);
      this.checkCount(name);
      this.checkBytes(name, bytes);
      return this.keep(name, image, at, bytes);
    } catch (e) {
      image.close();
      throw e;
    }
  }

  private keep(name: string, image: Db, at: number, bytes: number): SnapshotInfo {
    this.images.get(name)?.image.close();
    this.images.set(name, { image, at, bytes });
    return { name, at, bytes };
  }

  private freeing(): string {
    return `delete one with DELETE /_emulator/snapshots/{name} (held: ${[...this.images.keys()].join(", ")})`;
  }

  private checkCount(name: string): void {
    const { maxCount } = this.bounds;
    if (!this.images.has(name) && this.images.size >= maxCount) {
      throw new EmulatorError(
        "CONFLICT",
        `snapshot "${name}" not saved: ${this.images.size} snapshots are held, the most snapshots.maxCount allows (${maxCount}); ${this.freeing()}, save under one of their names, or raise snapshots.maxCount in the config`,
      );
    }
  }

  private checkBytes(name: string, bytes: number): void {
    const { maxBytes } = this.bounds;
    const others = this.totalBytes() - (this.images.get(name)?.bytes ?? 0);
    if (others + bytes > maxBytes) {
      throw new EmulatorError(
        "CONFLICT",
        `snapshot "${name}" not saved: it takes ${mb(bytes)} and the other snapshots ${mb(others)}, over snapshots.maxBytes (${mb(maxBytes)}); ${others > 0 ? `${this.freeing()}, or raise` : "raise"} snapshots.maxBytes in the config`,
      );
    }
  }

  /**
   * Puts snapshot `name` back. Every request that arrives meanwhile waits for it to end (see
   * `held`): none sees part of the old state and part of the new. A second restore waits for the
   * first, and a restore waits for the copies of exports under way (each holds the state of one moment).
   */
  async restore(name: string): Promise<SnapshotInfo> {
    while (this.restoring || this.saving || this.reset || this.copying.size > 0) await (this.restoring ?? this.saving ?? this.reset ?? Promise.all(this.copying));
    const snap = this.images.get(name);
    if (!snap) throw new EmulatorError("NOT_FOUND", `no snapshot named "${name}"; saved: ${[...this.images.keys()].join(", ") || "none"}`);
    const done = this.restoreWith(async () => {
      // Rows still held back (stopping the workers may have written some) go in first, so that the
      // image replaces them too rather than their being written on top of it afterwards; writes
      // made while it copies (by a request under way as it began) are dropped with the old state.
      this.flush();
      const release = this.holdWrites();
      try {
        await copyImage(snap.image, this.db);
      } finally {
        release();
      }
    }, snap.at);
    this.restoring = done.then(
      () => {},
      () => {},
    );
    this.restoringName = name;
    try {
      await done;
    } finally {
      this.restoring = this.restoringName = undefined;
    }
    return { name, at: snap.at, bytes: snap.bytes };
  }

  delete(name: string): boolean {
    const snap = this.images.get(name);
    if (!snap) return false;
    if (name === this.restoringName) throw new EmulatorError("CONFLICT", `snapshot "${name}" not deleted: it is being restored; delete it once the restore has ended`);
    snap.image.close();
    return this.images.delete(name);
  }

  /** Frees every snapshot (the emulator closes). */
  close(): void {
    for (const s of this.images.values()) s.image.close();
    this.images.clear();
  }

  /**
   * The database as a SQLite file for `minipod export`, with every secret redacted, streamed. It
   * is copied into a private temporary directory by steps (SQLite's online backup), its secrets are
   * overwritten by steps with freed space zeroed as it goes, and the file, removed as soon as it
   * is open, is read out as the body is sent: the event loop is never held for long and memory
   * does not grow with the database.
   */
  async exportState(): Promise<ExportedState> {
    this.flush();
    const dir = await privateTemporaryDirectory("minipod-export-");
    const file = join(dir, "state.db");
    try {
      // An in-memory database's copy starts over at each write: once it has, the writes of the
      // turns to come wait for the copy to end (answers to writes wait with them; reads do not).
      // A restore begun meanwhile waits for the copy to end (its slices would start it over).
      let release = () => {};
      const copied = backupInSteps(this.db, file, EXPORT_STEP_PAGES, () => (release = this.deferWrites()));
      const copying = copied.then(
        () => {},
        () => {},
      );
      this.copying.add(copying);
      try {
        await copied;
      } finally {
        this.copying.delete(copying);
        release();
      }
      const copy = openSqlite(file);
      try {
        // An UPDATE would leave the old values in the file's free space: zeroed as they are freed.
        // The rollback journal (which holds the old pages) stays in memory, the file is left a
        // rollback-journal database whatever mode the live one has, and is never synced: it is
        // temporary. Each slice commits on its own, so the journal holds one slice's pages.
        copy.exec("PRAGMA secure_delete = ON; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF");
        await redactSecrets(copy);
      } finally {
        copy.close();
      }
      const handle = await open(file, "r");
      const bytes = (await handle.stat()).size;
      // Removed as soon as it is open: it is read to its end all the same, and nothing is left
      // behind whatever becomes of the process. Where the system refuses, once it has been read.
      const removed = await rm(dir, { recursive: true, force: true }).then(() => true, () => false);
      const stream = handle.createReadStream();
      if (!removed) stream.once("close", () => void rm(dir, { recursive: true, force: true }));
      return { bytes, body: Readable.toWeb(stream) as ReadableStream<Uint8Array> };
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }
}

/**
 * Replaces `into`'s rows with those of a state file (`minipod export`, `--import`): the file is
 * copied into a private temporary directory (the user's file is never changed, nor read into
 * memory), checked, brought to this schema, and copied into `into` by slices (store/image-copy.ts).
 * A file that is not a minipod state file is refused with 400, one past `maxBytes` with 413,
 * `into` unchanged either way.
 */
export async function importState(file: string, into: Db, maxBytes?: number): Promise<void> {
  const dir = await privateTemporaryDirectory("minipod-import-");
  try {
    const copy = join(dir, "state.db");
    await copyFile(file, copy);
    // A WAL database's header says so (bytes 18 and 19): marked a rollback-journal one, so that
    // the copy opens alone, whatever the file it came from.
    const handle = await open(copy, "r+");
    try {
      if ((await handle.stat()).size > 19) await handle.write(Buffer.from([1, 1]), 0, 2, 18);
    } finally {
      await handle.close();
    }
    let from: Db;
    try {
      from = openSqlite(copy);
    } catch (e) {
      throw new EmulatorError("BAD_REQUEST", `not a minipod state file (SQLite database): ${(e as Error).message}`);
    }
    try {
      from.exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF");
      checkImage(from, maxBytes);
      await copyImage(from, into);
    } catch (e) {
      throw (e as { code?: unknown }).code === "SQLITE_NOTADB" || (e as { code?: unknown }).code === "SQLITE_CORRUPT"
        ? new EmulatorError("BAD_REQUEST", `not a minipod state file (SQLite database): ${(e as Error).message}`)
        : e;
    } finally {
      from.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A directory of this process alone under the system's temporary folder (TMPDIR). Where it
 * cannot be made, the error says which folder and why: the operator's setting, not the request's
 * fault (answered 507 as any other lack of storage).
 */
async function privateTemporaryDirectory(prefix: string): Promise<string> {
  const parent = tmpdir();
  try {
    return await mkdtemp(join(parent, prefix));
  } catch (e) {
    throw new EmulatorError(
      "STORAGE_FULL",
      `cannot make a temporary directory in ${parent} (TMPDIR): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; point TMPDIR at a writable folder`,
    );
  }
}
