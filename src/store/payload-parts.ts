import type { Statement } from "better-sqlite3";
import { jsonText, RawJson } from "../domain/json-text.js";
import type { Db } from "./db.js";
import type { WriteBehind } from "./write-behind.js";

/**
 * Large job payloads (inputs and outputs past `PARTS_FROM` characters of JSON) are written to
 * `payload_parts` a part at a time, a bounded amount per turn of the event loop, and the job's row
 * holds a reference to them (`#parts:{name}:{length}`, which no JSON text can be). Written in its
 * row, a 20 MB output rewrote the row's 20 MB input with it, and a job submitted and finished in
 * one turn wrote 40 MB in one statement: 60-110 ms of a blocked event loop in memory, 200-270 ms
 * with a database file.
 *
 * The row comes first, with the reference; the parts follow over the next turns. Nothing is
 * acknowledged before they are all committed (`whenWritten`, which the job store's `whenDurable`
 * waits for), and what a process killed meanwhile left half-written is put right at the next start
 * (`repair`): a job whose input is incomplete was never acknowledged and goes; one whose output is
 * incomplete is running again (its worker's result was never acknowledged either).
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
  jobId: string;
  name: string;
  text: string;
  /** Characters written (in the transaction open now or committed). */
  written: number;
  /** Characters committed. */
  committed: number;
  token: string;
}

/** A payload whose text is in `payload_parts`, read from there when first needed. */
export class StoredJson extends RawJson {
  private loaded: string | undefined;

  constructor(
    readonly jobId: string,
    /** What the job's row holds. */
    readonly token: string,
    private readonly length: number,
    private readonly load: () => string,
  ) {
    super("");
  }

  override get text(): string {
    this.loaded ??= this.load();
    return this.loaded;
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
  /** By job id and field. */
  private readonly uploads = new Map<string, Upload>();
  private spentThisTurn = 0;
  private turnResetScheduled = false;
  private seq = 0;
  /** Whether the flush under way writes everything (a snapshot, an export): no budget then. */
  private everything = false;
  /** Settled once no upload is left; made only when someone asks. */
  private written: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined;
  private readonly s: { put: Statement<[string, string, number, string]>; parts: Statement<[string, string], { text: string }>; lengthOf: Statement<[string, string], { n: number | null }> };

  constructor(
    private readonly db: Db,
    private readonly writes: WriteBehind,
  ) {
    this.s = {
      put: db.prepare(`INSERT OR REPLACE INTO payload_parts (job_id, name, part, text) VALUES (?, ?, ?, ?)`),
      parts: db.prepare(`SELECT text FROM payload_parts WHERE job_id = ? AND name = ? ORDER BY part`),
      lengthOf: db.prepare(`SELECT SUM(length(text)) AS n FROM payload_parts WHERE job_id = ? AND name = ?`),
    };
    writes.add({
      pending: (all) => {
        this.everything = all;
        return this.uploads.size > 0 && (all || this.spentThisTurn < PER_TURN) && [...this.uploads.values()].some((u) => u.written < u.text.length);
      },
      write: () => this.writeParts(),
      committed: () => this.settle(),
      failed: (e) => this.rollBack(e),
    });
  }

  /**
   * What a job's row holds for a payload's JSON text: the text itself when it is small, else a
   * reference to its parts, which are written from the next turns on (once per text).
   */
  column(jobId: string, field: "input" | "output", value: unknown): string {
    if (value instanceof StoredJson && value.jobId === jobId) return value.token;
    if (value instanceof RawJson && value.size <= PARTS_FROM) return value.text;
    const t = jsonText(value);
    if (t.length <= PARTS_FROM) return t;
    const key = `${jobId}\n${field}`;
    const known = this.uploads.get(key);
    if (known?.text === t) return known.token;
    const name = `${field}-${RUN}-${++this.seq}`;
    const upload: Upload = { jobId, name, text: t, written: 0, committed: 0, token: `${PREFIX}${name}:${t.length}` };
    this.uploads.set(key, upload);
    this.writes.schedule();
    return upload.token;
  }

  /** A payload column's value: parsed when small, a `RawJson` when large, a `StoredJson` when in parts. */
  read(jobId: string, column: string, small: (text: string) => unknown): unknown {
    const ref = parseToken(column);
    if (!ref) return small(column);
    return new StoredJson(jobId, column, ref.length, () => this.textOf(jobId, column));
  }

  /** Settles once every upload begun so far is committed; undefined when none is under way. A failed commit rejects it. */
  whenWritten(): Promise<void> | undefined {
    if (this.uploads.size === 0) return undefined;
    if (!this.written) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const promise = new Promise<void>((ok, fail) => {
        resolve = ok;
        reject = fail;
      });
      this.written = { promise, resolve, reject };
    }
    return this.written.promise;
  }

  /** Forgets what is under way: the database was replaced under the store (a snapshot restored, a reset). */
  clear(): void {
    this.uploads.clear();
    this.settle();
  }

  /**
   * Puts right what a process stopped in the middle of writing left behind: jobs whose input is
   * incomplete are deleted, jobs whose output is incomplete lose it and are running again (the
   * restart's recovery re-queues them). Returns how many jobs it changed.
   */
  repair(): number {
    const rows = this.db.prepare<[], { id: string; input: string; output: string | null }>(`SELECT id, input, output FROM jobs WHERE input LIKE '${PREFIX}%' OR output LIKE '${PREFIX}%'`).all();
    let changed = 0;
    for (const r of rows) {
      if (!this.complete(r.id, r.input)) {
        this.db.prepare(`DELETE FROM jobs WHERE id = ?`).run(r.id);
        changed++;
      } else if (r.output !== null && !this.complete(r.id, r.output)) {
        this.db.prepare(`UPDATE jobs SET output = NULL, status = 'IN_PROGRESS', completed_at = NULL WHERE id = ?`).run(r.id);
        changed++;
      }
    }
    return changed;
  }

  private complete(jobId: string, column: string): boolean {
    const ref = parseToken(column);
    return !ref || (this.s.lengthOf.get(jobId, ref.name)?.n ?? 0) === ref.length;
  }

  private textOf(jobId: string, token: string): string {
    for (const u of this.uploads.values()) if (u.jobId === jobId && u.token === token) return u.text;
    const ref = parseToken(token)!;
    const text = this.s.parts.all(jobId, ref.name).map((r) => r.text).join("");
    if (text.length !== ref.length) throw new Error(`job ${jobId}: its stored payload ${ref.name} is incomplete (${text.length} of ${ref.length} characters)`);
    return text;
  }

  private writeParts(): void {
    if (!this.turnResetScheduled) {
      this.turnResetScheduled = true;
      setImmediate(() => {
        this.turnResetScheduled = false;
        this.spentThisTurn = 0;
      });
    }
    const all = this.everything;
    for (const u of this.uploads.values()) {
      while (u.written < u.text.length && (all || this.spentThisTurn < PER_TURN)) {
        const end = Math.min(u.text.length, u.written + PART);
        this.s.put.run(u.jobId, u.name, Math.floor(u.written / PART), u.text.slice(u.written, end));
        this.spentThisTurn += end - u.written;
        u.written = end;
      }
    }
    if ([...this.uploads.values()].some((u) => u.written < u.text.length)) this.writes.schedule();
  }

  private settle(): void {
    for (const [key, u] of this.uploads) {
      u.committed = u.written;
      if (u.committed >= u.text.length) this.uploads.delete(key);
    }
    if (this.uploads.size === 0) {
      const w = this.written;
      this.written = undefined;
      w?.resolve();
    }
  }

  private rollBack(e: unknown): void {
    // The parts of the failed transaction are written again, from where the last commit ended.
    for (const u of this.uploads.values()) u.written = u.committed;
    const w = this.written;
    this.written = undefined;
    w?.reject(e);
    // Again in a second (a full disk may take a while to get space back), or with the next writes.
    setTimeout(() => this.writes.schedule(), 1000).unref();
  }
}
