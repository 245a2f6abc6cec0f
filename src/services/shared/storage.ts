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

/**
 * The bytes of documents of one kind (a Flash artifact's tar.gz), in pieces of their own rows
 * beside the document, written and read a piece at a time: a large file kept whole in a document
 * was encoded, written and read in one turn of the event loop. A document's pieces are deleted
 * with it (and with every document of its kind on a reset); a snapshot and an export carry them.
 */
export interface PieceStore {
  /** Writes piece `index` of document `id` (the bytes are copied). */
  put(id: string, index: number, bytes: Uint8Array): void;
  /** Piece `index` of document `id`, if written. */
  get(id: string, index: number): Buffer | undefined;
  /** Deletes piece `index` of document `id`, or every piece of it. */
  delete(id: string, index?: number): void;
}

// The usage intervals billing meters: rows of their own (one per worker life, pod run, volume size),
// written with the jobs' write-behind (store/usage-store.ts).

/** What an interval meters: a serverless worker's life, a pod's running time, a volume's size. */
/** What a model over documents of one kind is built with: its store, the time, and new ids. */
export interface Documents<T extends StoredDocument> {
  store: DocumentStore<T>;
  clock: Now;
  newId: () => string;
}

export type UsageKind = "worker" | "pod" | "volume";

/** What an interval bills, fixed when it opens. */
export interface UsageAttrs {
  endpointId?: string;
  templateId?: string;
  /** Absent on CPU pods and CPU workers. */
  gpuTypeId?: string;
  gpuCount?: number;
  /** CPU pods and CPU workers. */
  vcpuCount?: number;
  dataCenterId?: string;
  /** Pods of a cluster: billed as the cluster's. */
  clusterId?: string;
  /** Volumes. */
  sizeGb?: number;
  volumeType?: string;
}

export interface UsageInterval {
  id: number;
  kind: UsageKind;
  resourceId: string;
  attrs: UsageAttrs;
  startedAt: number;
  /** Undefined while the interval is open. */
  stoppedAt: number | undefined;
  /** Last virtual time the resource was known alive (closes worker intervals after a crash). */
  seenAt: number;
}

/** Usage intervals in storage. */
export interface UsageStore {
  /** Opens an interval; returns its id. */
  open(kind: UsageKind, resourceId: string, attrs: UsageAttrs, at: number): number;
  close(id: number, at: number): void;
  seen(id: number, at: number): void;
  /** The open interval of a resource, if any. */
  openFor(kind: UsageKind, resourceId: string): UsageInterval | undefined;
  /** Intervals of a kind overlapping [from, to). */
  overlapping(kind: UsageKind, from: number, to: number): UsageInterval[];
  /** Closes every open interval of a kind at its last-seen time; returns how many. */
  closeOpenAtSeen(kind: UsageKind): number;
  /** Ends every interval of a kind that is open or ends after `at` at `at` (snapshot restore). */
  endAllAt(kind: UsageKind, at: number): void;
  deleteAll(): void;
}
