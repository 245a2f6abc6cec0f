import type { DocumentStore } from "../services/shared/storage.js";
import type { Db } from "./db.js";

interface DocumentRow {
  data: string;
}

/** The writes to each database's documents, of any kind (see `documentsVersion`). */
const versions = new WeakMap<Db, { n: number }>();

/**
 * A number that moves with every write to the database's documents (any kind, through any
 * store, and a snapshot restored: `documentsChanged`): what was read of them still holds while
 * it has not moved.
 */
export function documentsVersion(db: Db): number {
  return versions.get(db)?.n ?? 0;
}

/** The documents of `db` changed other than through a store (a snapshot restored into it). */
export function documentsChanged(db: Db): void {
  const v = versions.get(db);
  if (v) v.n++;
  else versions.set(db, { n: 1 });
}

/** Documents of one kind in the `documents` table: each a JSON object, listed in creation order. */
export class SqliteDocumentStore<T extends { id: string; createdAt: number }> implements DocumentStore<T> {
  private readonly s;

  constructor(
    private readonly db: Db,
    private readonly kind: string,
  ) {
    this.s = {
      list: db.prepare<[string], DocumentRow>(`SELECT data FROM documents WHERE kind = ? ORDER BY created_at, rowid`),
      owned: db.prepare<[string, string], DocumentRow>(`SELECT data FROM documents WHERE kind = ? AND owner = ? ORDER BY created_at, rowid`),
      get: db.prepare<[string, string], DocumentRow>(`SELECT data FROM documents WHERE kind = ? AND id = ?`),
      save: db.prepare(
        `INSERT INTO documents (kind, id, owner, created_at, data) VALUES (@kind, @id, @owner, @created_at, @data)
         ON CONFLICT (kind, id) DO UPDATE SET owner = excluded.owner, data = excluded.data`,
      ),
      delete: db.prepare<[string, string]>(`DELETE FROM documents WHERE kind = ? AND id = ?`),
      deleteOwned: db.prepare<[string, string]>(`DELETE FROM documents WHERE kind = ? AND owner = ?`),
      deleteAll: db.prepare<[string]>(`DELETE FROM documents WHERE kind = ?`),
    };
  }

  list(owner?: string): T[] {
    const rows = owner === undefined ? this.s.list.all(this.kind) : this.s.owned.all(this.kind, owner);
    return rows.map((r) => JSON.parse(r.data) as T);
  }

  get(id: string): T | undefined {
    const r = this.s.get.get(this.kind, id);
    return r ? (JSON.parse(r.data) as T) : undefined;
  }

  save(doc: T, owner?: string): void {
    documentsChanged(this.db);
    this.s.save.run({ kind: this.kind, id: doc.id, owner: owner ?? null, created_at: doc.createdAt, data: JSON.stringify(doc) });
  }

  delete(id: string): boolean {
    documentsChanged(this.db);
    return this.s.delete.run(this.kind, id).changes > 0;
  }

  deleteOwned(owner: string): void {
    documentsChanged(this.db);
    this.s.deleteOwned.run(this.kind, owner);
  }

  deleteAll(): void {
    documentsChanged(this.db);
    this.s.deleteAll.run(this.kind);
  }
}
