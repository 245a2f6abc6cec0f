import type { PieceStore } from "../services/shared/storage.js";
import type { Db } from "./db.js";

/**
 * Pieces of the documents of one kind in `document_pieces` (see `PieceStore`), one BLOB a row.
 * A trigger deletes a document's pieces with the document.
 */
export class SqlitePieceStore implements PieceStore {
  private readonly s;

  constructor(
    db: Db,
    private readonly kind: string,
  ) {
    this.s = {
      put: db.prepare<[string, string, number, Uint8Array]>(`INSERT OR REPLACE INTO document_pieces (kind, id, piece, bytes) VALUES (?, ?, ?, ?)`),
      get: db.prepare<[string, string, number], { bytes: Buffer }>(`SELECT bytes FROM document_pieces WHERE kind = ? AND id = ? AND piece = ?`),
      delete: db.prepare<[string, string]>(`DELETE FROM document_pieces WHERE kind = ? AND id = ?`),
      deleteOne: db.prepare<[string, string, number]>(`DELETE FROM document_pieces WHERE kind = ? AND id = ? AND piece = ?`),
    };
  }

  put(id: string, index: number, bytes: Uint8Array): void {
    this.s.put.run(this.kind, id, index, bytes);
  }

  get(id: string, index: number): Buffer | undefined {
    return this.s.get.get(this.kind, id, index)?.bytes;
  }

  delete(id: string, index?: number): void {
    if (index === undefined) this.s.delete.run(this.kind, id);
    else this.s.deleteOne.run(this.kind, id, index);
  }
}
