/**
 * What the management services need from storage. `store/` implements these with SQLite; the
 * domain never sees SQL.
 */
import type { NetworkVolume } from "./network-volumes.js";
import type { Template } from "./templates.js";

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
