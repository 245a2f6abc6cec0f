import type { UsageAttrs, UsageInterval, UsageKind, UsageStore } from "../services/shared/storage.js";
import type { Db } from "./db.js";
import { WriteBehind } from "./write-behind.js";

interface UsageRow {
  id: number;
  kind: UsageKind;
  resource_id: string;
  attrs: string;
  started_at: number;
  stopped_at: number | null;
  seen_at: number;
}

const fromRow = (r: UsageRow): UsageInterval => ({
  id: r.id,
  kind: r.kind,
  resourceId: r.resource_id,
  attrs: JSON.parse(r.attrs) as UsageAttrs,
  startedAt: r.started_at,
  stoppedAt: r.stopped_at ?? undefined,
  seenAt: r.seen_at,
});

/**
 * Usage intervals (worker lives, pod running time, volume sizes) in SQLite.
 *
 * A worker's last-seen time changes with every job it runs and matters only after a crash, when
 * it closes the worker's interval. It is written behind: the latest per interval, at the end of
 * the turn (a database file), or when something needs it (a database in memory, which no crash
 * leaves behind): a read of the intervals, a snapshot, an export. Either way one row per worker.
 */
export class SqliteUsageStore implements UsageStore {
  private readonly s;
  /** Last-seen times not written yet, by interval id. */
  private seenWaiting = new Map<number, number>();
  private readonly holdSeen: boolean;

  constructor(
    private readonly db: Db,
    private readonly writes: WriteBehind = new WriteBehind(db),
  ) {
    this.holdSeen = db.memory;
    this.s = {
      open: db.prepare(`INSERT INTO usage_intervals (kind, resource_id, attrs, started_at, seen_at) VALUES (@kind, @resource_id, @attrs, @at, @at)`),
      close: db.prepare<[number, number]>(`UPDATE usage_intervals SET stopped_at = ? WHERE id = ? AND stopped_at IS NULL`),
      seen: db.prepare<[number, number]>(`UPDATE usage_intervals SET seen_at = ? WHERE id = ?`),
      openFor: db.prepare<[UsageKind, string], UsageRow>(`SELECT * FROM usage_intervals WHERE kind = ? AND resource_id = ? AND stopped_at IS NULL`),
      overlapping: db.prepare<[UsageKind, number, number], UsageRow>(
        `SELECT * FROM usage_intervals WHERE kind = ? AND started_at < ? AND (stopped_at IS NULL OR stopped_at > ?) ORDER BY started_at, id`,
      ),
      closeOpenAtSeen: db.prepare<[UsageKind]>(`UPDATE usage_intervals SET stopped_at = seen_at WHERE kind = ? AND stopped_at IS NULL`),
      endAllAt: db.prepare(
        `UPDATE usage_intervals SET stopped_at = MAX(started_at, @at) WHERE kind = @kind AND (stopped_at IS NULL OR stopped_at > @at)`,
      ),
    };
    writes.add({
      pending: (all) => this.seenWaiting.size > 0 && (all || !this.holdSeen),
      write: () => this.flush(),
    });
  }

  /**
   * Writes the last-seen times still waiting: before a statement reads or changes intervals (in
   * its transaction, if one is open), and from the writer at the end of a turn.
   */
  private flush(): void {
    if (this.seenWaiting.size === 0) return;
    const waiting = this.seenWaiting;
    this.seenWaiting = new Map();
    for (const [id, at] of waiting) this.s.seen.run(at, id);
  }

  open(kind: UsageKind, resourceId: string, attrs: UsageAttrs, at: number): number {
    return Number(this.s.open.run({ kind, resource_id: resourceId, attrs: JSON.stringify(attrs), at }).lastInsertRowid);
  }

  close(id: number, at: number): void {
    this.flush();
    this.s.close.run(at, id);
  }

  seen(id: number, at: number): void {
    this.seenWaiting.set(id, at);
    if (!this.holdSeen) this.writes.schedule();
  }

  openFor(kind: UsageKind, resourceId: string): UsageInterval | undefined {
    this.flush();
    const r = this.s.openFor.get(kind, resourceId);
    return r ? fromRow(r) : undefined;
  }

  overlapping(kind: UsageKind, from: number, to: number): UsageInterval[] {
    this.flush();
    return this.s.overlapping.all(kind, to, from).map(fromRow);
  }

  closeOpenAtSeen(kind: UsageKind): number {
    this.flush();
    return this.s.closeOpenAtSeen.run(kind).changes;
  }

  endAllAt(kind: UsageKind, at: number): void {
    this.flush();
    this.s.endAllAt.run({ kind, at });
  }

  deleteAll(): void {
    this.seenWaiting.clear();
    this.db.exec("DELETE FROM usage_intervals");
  }
}
