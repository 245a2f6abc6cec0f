/**
 * What the management services need from storage. `store/` implements these with SQLite; the
 * domain never sees SQL.
 */
import type { NetworkVolume } from "../network-volumes/network-volumes.js";
import type { Template } from "../templates/templates.js";

export interface NetworkVolumeStore {
  list(): NetworkVolume[];
  get(id: string): NetworkVolume | undefined;
  /** Inserts or replaces the whole volume. */
  save(volume: NetworkVolume): void;
  delete(id: string): boolean;
  deleteAll(): void;
}

export interface TemplateStore {
  list(): Template[];
  get(id: string): Template | undefined;
  /** Inserts or replaces the whole template. */
  save(template: Template): void;
  delete(id: string): boolean;
  deleteAll(): void;
}

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
