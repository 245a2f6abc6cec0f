/**
 * What the management services need from storage: one generic store of JSON documents, by kind.
 * `store/document-store.ts` implements it with SQLite; the services never see SQL.
 */
/** The time source the management services stamp resources with (the virtual clock). */
export interface Now {
  now(): number;
}

/** What the generic store keeps: a JSON object with an id, listed in creation order. */
export interface StoredDocument {
  id: string;
  createdAt: number;
}

/**
 * JSON documents of one kind (clusters, releases, ...), in creation order. `owner` ties a
 * document to another resource (a release to its endpoint) so they can be listed and deleted
 * together.
 */
export interface DocumentStore<T extends StoredDocument> {
  list(owner?: string): T[];
  get(id: string): T | undefined;
  /** Inserts or replaces the whole document. */
  save(doc: T, owner?: string): void;
  delete(id: string): boolean;
  deleteOwned(owner: string): void;
  deleteAll(): void;
}
