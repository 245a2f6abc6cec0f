import { EmulatorError } from "../../domain/errors.js";
import { NETWORK_VOLUME_SIZE_MAX_GB, NETWORK_VOLUME_SIZE_MIN_GB } from "../../domain/limits.js";
import { found, inUseBy, invalidBody } from "../shared/invalid.js";
import type { Documents } from "../shared/storage.js";
import { Listeners } from "../../domain/listeners.js";
import { VOLUME_TYPES, type VolumeType } from "../shared/catalog/datacenter-catalog.js";

/** Storage tiers of the specification; a volume's tier is set at creation and immutable. */

export { VOLUME_TYPES, type VolumeType };
export const DEFAULT_VOLUME_TYPE: VolumeType = "STANDARD";

/** A network volume, shared by the v1 (`dataCenterId`) and v2 (`dataCenter`) surfaces. */
export interface NetworkVolume {
  id: string;
  name: string;
  /** GB, NETWORK_VOLUME_SIZE_MIN_GB..NETWORK_VOLUME_SIZE_MAX_GB; never shrinks. */
  size: number;
  /** Immutable after creation. */
  dataCenter: string;
  /** Immutable after creation. */
  type: VolumeType;
  createdAt: number;
  updatedAt: number;
}

export interface NewNetworkVolume {
  id?: string | undefined;
  name: string;
  size: number;
  dataCenter: string;
  type?: VolumeType | undefined;
}

/**
 * What an update asks for. `dataCenter` and `type` are here only so that an attempt to change
 * them is refused with a message saying they are immutable, rather than a generic one.
 */
export interface NetworkVolumeChange {
  name?: string | undefined;
  size?: number | undefined;
  dataCenter?: unknown;
  type?: unknown;
}

/** The fields that never change after creation, in the order they are reported. */
export const IMMUTABLE_VOLUME_FIELDS = ["dataCenter", "type"] as const;

/** How a field is spelled on the wire, for messages (v1 says `dataCenterId`). */
export type VolumeFieldNames = Partial<Record<keyof NetworkVolumeChange, string>>;

/** What happened to a volume, for whoever keeps a history (billing counts GB-hours). */
export interface NetworkVolumeEvent {
  kind: "created" | "updated" | "deleted";
  volume: NetworkVolume;
  at: number;
}

/** The immutability message, shared with the routes that refuse the field in a schema. */
export const immutableMessage = (field: string): string =>
  `${field} is immutable after creation; create a new network volume to use another ${field === "type" ? "storage type" : "data center"}`;

/**
 * Network volumes: size 10..4096 GB that may only grow, data center and type fixed at creation,
 * and no deletion while an endpoint still uses the volume.
 */
export class NetworkVolumeService {
  private readonly listeners = new Listeners<NetworkVolumeEvent>();

  constructor(
    private readonly d: Documents<NetworkVolume> & {
      /** Ids of the endpoints that use a volume; a volume in use cannot be deleted. */
      usedBy?: (volumeId: string) => string[];
    },
  ) {}

  list(): NetworkVolume[] {
    return this.d.store.list();
  }

  get(id: string): NetworkVolume {
    return found(this.d.store.get(id), "network volume", id);
  }

  has(id: string): boolean {
    return this.d.store.get(id) !== undefined;
  }

  create(input: NewNetworkVolume, names: VolumeFieldNames = {}): NetworkVolume {
    const errors = [...checkName(input.name, names), ...checkSize(input.size, names)];
    if (!input.dataCenter) errors.push(`$.${names.dataCenter ?? "dataCenter"}: expected a data center id such as EU-RO-1`);
    if (errors.length) throw invalidBody(errors);
    const now = this.d.clock.now();
    const id = input.id ?? this.d.newId();
    if (this.d.store.get(id)) throw new EmulatorError("CONFLICT", `network volume "${id}" already exists`);
    const volume: NetworkVolume = {
      id,
      name: input.name,
      size: input.size,
      dataCenter: input.dataCenter,
      type: input.type ?? DEFAULT_VOLUME_TYPE,
      createdAt: now,
      updatedAt: now,
    };
    this.d.store.save(volume);
    this.emit({ kind: "created", volume, at: now });
    return volume;
  }

  /** Renames or grows a volume; refuses a smaller size and any change of data center or type. */
  update(id: string, change: NetworkVolumeChange, names: VolumeFieldNames = {}): NetworkVolume {
    const current = this.get(id);
    const errors: string[] = [];
    for (const field of IMMUTABLE_VOLUME_FIELDS) {
      if (change[field] !== undefined) {
        const wire = names[field] ?? field;
        errors.push(`$.${wire}: ${immutableMessage(wire)}`);
      }
    }
    if (change.name !== undefined) errors.push(...checkName(change.name, names));
    if (change.size !== undefined) {
      errors.push(...checkSize(change.size, names));
      if (change.size < current.size) {
        errors.push(`$.${names.size ?? "size"}: a network volume cannot shrink: it has ${current.size} GB, so the new size must be ${current.size} or more`);
      }
    }
    if (errors.length) throw invalidBody(errors);
    const volume: NetworkVolume = {
      ...current,
      name: change.name ?? current.name,
      size: change.size ?? current.size,
      updatedAt: this.d.clock.now(),
    };
    this.d.store.save(volume);
    this.emit({ kind: "updated", volume, at: volume.updatedAt });
    return volume;
  }

  delete(id: string): void {
    const volume = this.get(id);
    const users = this.d.usedBy?.(id) ?? [];
    if (users.length) throw inUseBy(users, `network volume "${id}"`, "is attached to", (them) => `detach it or delete ${them} first`);
    this.d.store.delete(id);
    this.emit({ kind: "deleted", volume, at: this.d.clock.now() });
  }

  /** Writes a volume declared in the config as declared (start and reset); no rule applies. */
  seed(input: NewNetworkVolume & { id: string }): void {
    const existing = this.d.store.get(input.id);
    const now = this.d.clock.now();
    const declared = { id: input.id, name: input.name, size: input.size, dataCenter: input.dataCenter, type: input.type ?? DEFAULT_VOLUME_TYPE };
    const same = existing && (Object.keys(declared) as Array<keyof typeof declared>).every((k) => existing[k] === declared[k]);
    if (same) return;
    const volume: NetworkVolume = { ...declared, createdAt: existing?.createdAt ?? now, updatedAt: now };
    this.d.store.save(volume);
    this.emit({ kind: existing ? "updated" : "created", volume, at: now });
  }

  /** Calls `fn` on every creation, change and deletion until the returned function is called. */
  subscribe(fn: (e: NetworkVolumeEvent) => void): () => void {
    return this.listeners.subscribe(fn);
  }

  private emit(e: NetworkVolumeEvent): void {
    this.listeners.emit(e);
  }
}

function checkName(name: string, names: VolumeFieldNames): string[] {
  return name.trim() === "" ? [`$.${names.name ?? "name"}: expected a non-empty name`] : [];
}

function checkSize(size: number, names: VolumeFieldNames): string[] {
  if (Number.isInteger(size) && size >= NETWORK_VOLUME_SIZE_MIN_GB && size <= NETWORK_VOLUME_SIZE_MAX_GB) return [];
  return [`$.${names.size ?? "size"}: expected an integer number of GB from ${NETWORK_VOLUME_SIZE_MIN_GB} to ${NETWORK_VOLUME_SIZE_MAX_GB}`];
}
