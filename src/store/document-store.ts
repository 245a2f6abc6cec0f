import type { DocumentStore } from "../services/shared/storage.js";
import type { Db } from "./db.js";

interface DocumentRow {
  data: string;
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
    this.s.save.run({ kind: this.kind, id: doc.id, owner: owner ?? null, created_at: doc.createdAt, data: JSON.stringify(doc) });
  }

  delete(id: string): boolean {
    return this.s.delete.run(this.kind, id).changes > 0;
  }

  deleteOwned(owner: string): void {
    this.s.deleteOwned.run(this.kind, owner);
  }

  deleteAll(): void {
    this.s.deleteAll.run(this.kind);
  }
}
