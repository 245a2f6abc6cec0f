import type { Db } from "./db.js";

/** A store whose writes wait for the end of the turn. */
export interface BehindWrites {
  /**
   * Whether it has writes waiting. `all` false at the end of a turn, true when everything must be
   * in the database (before a read, a snapshot, an export, close): a store may keep rows that
   * nothing waits for until then.
   */
  pending(all: boolean): boolean;
  /** Writes them (inside the transaction the writer opened). */
  write(): void;
  /** They are committed. */
  committed?(): void;
  /** The transaction that held them failed and was rolled back. */
  failed?(error: unknown): void;
}

/** How long rows that can wait (see `scheduleLater`) wait at most, in real ms. */
export const LATER_MS = 50;

/**
 * The writes of one turn of the event loop, committed together at its end: the stores of one
 * database (jobs, timelines, the journal) gather their rows during a turn and this writes them
 * all in one transaction, so a turn costs one commit whatever it changed. A store flushes early
 * before it reads with SQL. Inside a transaction someone else opened (a batch of due deadlines),
 * a flush writes into it; the stores hear `committed` at the end of the turn, once that
 * transaction is surely over.
 */
export class WriteBehind {
  private readonly parts: BehindWrites[] = [];
  private scheduled = false;
  private laterTimer: NodeJS.Timeout | undefined;
  /** Stores that wrote into an enclosing transaction and still wait to hear it committed. */
  private readonly writtenInside = new Set<BehindWrites>();
  private readonly inTx: (fn: () => void) => void;
  /** Holds in force (`hold`): nothing is written meanwhile. */
  private holds = 0;
  /** Deferrals in force (`defer`), and whether a flush they put off waits for them. */
  private deferrals = 0;
  private putOff = false;

  /** @param onError told when a turn's writes fail to commit; without it the error is thrown. */
  constructor(
    private readonly db: Db,
    private readonly onError?: (error: unknown) => void,
  ) {
    this.inTx = db.transaction((fn: () => void) => fn());
  }

  /**
   * Writes nothing until the function it returns is called (a snapshot restore, while it copies
   * into the database in a transaction of its own): what the stores gather meanwhile waits, and a
   * flush then is a no-op. The stores drop it when told the database was replaced; what is left
   * is written at the end of the turn the hold ends.
   */
  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      if (this.holds === 0) this.schedule();
    };
  }

  /**
   * Puts off the flushes of the end of the turn (and of `scheduleLater`) until the function it
   * returns is called: an export copying an in-memory database, which SQLite's backup must start
   * over after every write, ends its copy meanwhile. A flush asked for (before a read with SQL, a
   * snapshot) still writes; the answers waiting for a commit (`whenDurable`) wait for the release.
   */
  defer(): () => void {
    this.deferrals++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.deferrals--;
      if (this.deferrals === 0 && this.putOff) {
        this.putOff = false;
        this.schedule();
      }
    };
  }

  /** The flush of the end of a turn or of `scheduleLater`, unless deferred. */
  private flushDue(): void {
    if (this.deferrals > 0) this.putOff = true;
    else this.flushReporting(false);
  }

  add(part: BehindWrites): void {
    this.parts.push(part);
  }

  /** Asks for a flush at the end of this turn. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushDue();
    });
  }

  /**
   * Asks for a flush within `LATER_MS` of real time, for rows nothing else depends on (the request
   * journal): they join the next turn that commits anyway, or a commit of their own when the timer
   * fires, so a stream of reads costs one commit per interval rather than one per turn. A kill -9
   * loses at most that interval of them; reads, snapshots and close flush them first.
   */
  scheduleLater(): void {
    if (this.laterTimer !== undefined) return;
    this.laterTimer = setTimeout(() => {
      this.laterTimer = undefined;
      this.flushDue();
    }, LATER_MS);
    this.laterTimer.unref();
  }

  /** A flush nobody waits on: its error goes to `onError` (thrown without one). */
  private flushReporting(all: boolean): void {
    try {
      this.flush(all);
    } catch (e) {
      if (!this.onError) throw e;
      this.onError(e);
    }
  }

  /**
   * Writes what the stores have waiting, now: what must not wait past this turn (before a read
   * with SQL), or with `all` everything, rows held until needed included (before a snapshot or an
   * export, or a read of those rows).
   */
  flush(all = false): void {
    if (!this.db.open || this.holds > 0) return;
    const due = this.parts.filter((p) => p.pending(all));
    if (this.db.inTransaction) {
      if (due.length === 0) return;
      for (const p of due) {
        p.write();
        this.writtenInside.add(p);
      }
      this.schedule();
      return;
    }
    const told = [...this.writtenInside];
    this.writtenInside.clear();
    if (due.length > 0) {
      try {
        this.inTx(() => {
          for (const p of due) p.write();
        });
      } catch (e) {
        for (const p of due) p.failed?.(e);
        throw e;
      }
    }
    for (const p of new Set([...told, ...due])) p.committed?.();
  }
}
