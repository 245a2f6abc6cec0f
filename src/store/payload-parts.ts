import type { Statement } from "better-sqlite3";
import { jsonText, RawJson } from "../domain/json-text.js";
import type { Db } from "./db.js";
import type { WriteBehind } from "./write-behind.js";

/**
 * Large job payloads (inputs and outputs past `PARTS_FROM` characters of JSON) are written to
 * `payload_parts` a part at a time, a bounded amount per turn of the event loop, before the job's
 * row, which then holds a reference to them (`#parts:{name}:{length}`, which no JSON text can be).
 * Written in its row, a 20 MB output rewrote the row's 20 MB input with it, and a job submitted and
 * finished in one turn wrote 40 MB in one statement: 60-110 ms of a blocked event loop in memory,
 * 200-270 ms with a database file.
 *
 * A payload is staged (`stage`) before the write that refers to it (a submission, a worker's
 * result, a handler's output): the row is written only once its parts are committed, so a row
 * never refers to parts that are not all there, and a payload that cannot be written (a full disk)
 * is refused before anything refers to it. Parts nothing refers to (a process stopped between the
 * two) are deleted at the next start.
 */
export const PARTS_FROM = 1024 * 1024;
/** Characters of one part. */
const PART = 256 * 1024;
/** Characters of parts written in one turn at most (unless everything must be written: a snapshot). */
const PER_TURN = 1024 * 1024;

const PREFIX = "#parts:";
/** A fresh part of each process's names, so that names never meet those a database already holds. */
const RUN = Math.random().toString(36).slice(2, 8);

interface Upload {
  name: string;
  text: string;
  /** Characters written (in the transaction open now or committed). */
  written: number;
  /** Parts written. */
  parts: number;
  done: (stored: StoredJson) => void;
  failed: (e: unknown) => void;
}

/** A payload whose text is in `payload_parts`, read from there when first needed. */
export class StoredJson extends RawJson {
  constructor(
    /** What a job's row holds. */
    readonly token: string,
    private readonly length: number,
    private readonly load: () => string,
    private loaded?: string,
    /** Reads the text's parts, a part a turn. */
    private readonly loadInTurns?: () => Promise<string[]>,
  ) {
    super("");
  }

  private loading: Promise<void> | undefined;
  /** The parts, once preloaded (joined only if someone asks for `text`). */
  private parts: string[] | undefined;

  override get text(): string {
    this.loaded ??= this.parts?.join("") ?? this.load();
    return this.loaded;
  }

  override preload(): Promise<void> | undefined {
    if (this.loaded !== undefined || this.parts !== undefined || !this.loadInTurns) return undefined;
    this.loading ??= this.loadInTurns().then((parts) => {
      this.parts = parts;
    });
    return this.loading;
  }

  override pieces(): readonly string[] {
    return this.parts ?? [this.text];
  }

  override get size(): number {
    return this.length;
  }
}

const parseToken = (token: string): { name: string; length: number } | undefined => {
  if (!token.startsWith(PREFIX)) return undefined;
  const colon = token.indexOf(":", PREFIX.length);
  return { name: token.slice(PREFIX.length, colon), length: Number(token.slice(colon + 1)) };
};

/** Large payloads of jobs, written behind a part at a time; see the module's comment. */
export class PayloadParts {
  private readonly uploads: Upload[] = [];
  private spentThisTurn = 0;
  private turnResetScheduled = false;
  private seq = 0;
  /** Whether the flush under way writes everything (a snapshot, an export): no budget then. */
  private everything = false;
  private readonly s: { put: Statement<[string, number, string]>; parts: Statement<[string], { text: string }>; part: Statement<[string, number], { text: string }>; drop: Statement<[string]> };

  constructor(
    private readonly db: Db,
    private readonly writes: WriteBehind,
  ) {
    this.s = {
      put: db.prepare(`INSERT OR REPLACE INTO payload_parts (name, part, text) VALUES (?, ?, ?)`),
      parts: db.prepare(`SELECT text FROM payload_parts WHERE name = ? ORDER BY part`),
      part: db.prepare(`SELECT text FROM payload_parts WHERE name = ? AND part = ?`),
      drop: db.prepare(`DELETE FROM payload_parts WHERE name = ?`),
    };
    writes.add({
      pending: (all) => {
        this.everything = all;
        return this.uploads.some((u) => u.written < u.text.length) && (all || this.spentThisTurn < PER_TURN);
      },
      write: () => this.writeParts(),
      committed: () => this.settle(),
      failed: (e) => this.fail(e),
    });
  }

  /**
   * A large payload written to its parts, over as many turns as it takes; undefined when it is
   * small enough for a row. Rejects when its parts cannot be committed (nothing refers to them).
   */
  stage(value: RawJson): Promise<StoredJson> | undefined {
    if (value instanceof StoredJson || value.size <= PARTS_FROM) return undefined;
    const text = value.text;
    const name = `${RUN}-${++this.seq}`;
    return new Promise<StoredJson>((done, failed) => {
      this.uploads.push({ name, text, written: 0, parts: 0, done, failed });
      this.writes.schedule();
    });
  }

  /** Deletes a staged payload's parts that no row will refer to (its submission was refused). */
  release(value: unknown): void {
    const ref = value instanceof StoredJson ? parseToken(value.token) : undefined;
    if (!ref) return;
    try {
      this.s.drop.run(ref.name);
    } catch {
      // A full disk: the next start's sweep deletes them.
    }
  }

  /** What a job's row holds for a payload: the reference of a stored one, else its JSON text. */
  column(value: unknown): string {
    return value instanceof StoredJson ? value.token : jsonText(value);
  }

  /** A payload column's value: `small` of the text, or a `StoredJson` for a reference. */
  read(column: string, small: (text: string) => unknown): unknown {
    const ref = parseToken(column);
    if (!ref) return small(column);
    return new StoredJson(column, ref.length, () => this.textOf(ref.name, ref.length), undefined, () => this.partsInTurns(ref.name, ref.length));
  }

  /** Forgets what is under way: the database was replaced under the store (a snapshot restored, a reset). */
  clear(): void {
    for (const u of this.uploads.splice(0)) u.failed(new Error("the database was replaced while a payload was being written"));
  }

  /** Deletes parts no row refers to (a process stopped between writing them and the row); returns how many payloads. */
  sweep(): number {
    const names = `SELECT substr(c, ${PREFIX.length + 1}, instr(substr(c, ${PREFIX.length + 1}), ':') - 1) FROM (SELECT input AS c FROM jobs WHERE input LIKE '${PREFIX}%' UNION ALL SELECT output FROM jobs WHERE output LIKE '${PREFIX}%')`;
    const orphans = this.db.prepare<[], { name: string }>(`SELECT DISTINCT name FROM payload_parts WHERE name NOT IN (${names})`).all();
    for (const o of orphans) this.s.drop.run(o.name);
    return orphans.length;
  }

  private textOf(name: string, length: number): string {
    const text = this.s.parts.all(name).map((r) => r.text).join("");
    if (text.length !== length) throw new Error(`stored payload ${name} is incomplete (${text.length} of ${length} characters)`);
    return text;
  }

  /** `textOf`'s parts, a part a turn: a 20 MB payload read at once held the event loop for tens of milliseconds. */
  private async partsInTurns(name: string, length: number): Promise<string[]> {
    const parts: string[] = [];
    let read = 0;
    for (let part = 0; read < length; part++) {
      const row = this.s.part.get(name, part);
      if (!row) break;
      parts.push(row.text);
      read += row.text.length;
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (read !== length) throw new Error(`stored payload ${name} is incomplete (${read} of ${length} characters)`);
    return parts;
  }

  private writeParts(): void {
    if (!this.turnResetScheduled) {
      this.turnResetScheduled = true;
      setImmediate(() => {
        this.turnResetScheduled = false;
        this.spentThisTurn = 0;
      });
    }
    for (const u of this.uploads) {
      while (u.written < u.text.length && (this.everything || this.spentThisTurn < PER_TURN)) {
        let end = Math.min(u.text.length, u.written + PART);
        // Never between the halves of a surrogate pair: an answer encodes each part on its own.
        const last = u.text.charCodeAt(end - 1);
        if (end < u.text.length && last >= 0xd800 && last <= 0xdbff) end--;
        this.s.put.run(u.name, u.parts++, u.text.slice(u.written, end));
        this.spentThisTurn += end - u.written;
        u.written = end;
      }
    }
    if (this.uploads.some((u) => u.written < u.text.length)) this.writes.schedule();
  }

  /** The uploads written whole are committed: their payloads may be referred to. */
  private settle(): void {
    for (let i = 0; i < this.uploads.length; ) {
      const u = this.uploads[i]!;
      if (u.written < u.text.length) {
        i++;
        continue;
      }
      this.uploads.splice(i, 1);
      u.done(new StoredJson(`${PREFIX}${u.name}:${u.text.length}`, u.text.length, () => this.textOf(u.name, u.text.length), u.text));
    }
  }

  /** A transaction holding parts failed (a full disk): every upload under way is refused, its parts dropped. */
  private fail(e: unknown): void {
    for (const u of this.uploads.splice(0)) {
      try {
        this.s.drop.run(u.name);
      } catch {
        // Still full: the next start's sweep deletes them.
      }
      u.failed(e);
    }
  }
}
