import type { NetworkVolume, VolumeType } from "./network-volumes.js";
import type { NetworkVolumeStore } from "../shared/storage.js";
import type { Db } from "../../store/db.js";

interface VolumeRow {
  id: string;
  name: string;
  size_gb: number;
  data_center: string;
  type: string;
  created_at: number;
  updated_at: number;
}

const fromRow = (r: VolumeRow): NetworkVolume => ({
  id: r.id,
  name: r.name,
  size: r.size_gb,
  dataCenter: r.data_center,
  type: r.type as VolumeType,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Network volumes in SQLite (one table for the v1 and v2 surfaces). */
export class SqliteNetworkVolumeStore implements NetworkVolumeStore {
  private readonly s;

  constructor(private readonly db: Db) {
    this.s = {
      list: db.prepare<[], VolumeRow>(`SELECT * FROM network_volumes ORDER BY created_at, id`),
      get: db.prepare<[string], VolumeRow>(`SELECT * FROM network_volumes WHERE id = ?`),
      save: db.prepare(
        `INSERT OR REPLACE INTO network_volumes (id, name, size_gb, data_center, type, created_at, updated_at)
         VALUES (@id, @name, @size_gb, @data_center, @type, @created_at, @updated_at)`,
      ),
      delete: db.prepare<[string]>(`DELETE FROM network_volumes WHERE id = ?`),
    };
  }

  list(): NetworkVolume[] {
    return this.s.list.all().map(fromRow);
  }

  get(id: string): NetworkVolume | undefined {
    const r = this.s.get.get(id);
    return r ? fromRow(r) : undefined;
  }

  save(v: NetworkVolume): void {
    this.s.save.run({
      id: v.id,
      name: v.name,
      size_gb: v.size,
      data_center: v.dataCenter,
      type: v.type,
      created_at: v.createdAt,
      updated_at: v.updatedAt,
    });
  }

  delete(id: string): boolean {
    return this.s.delete.run(id).changes > 0;
  }

  deleteAll(): void {
    this.db.exec("DELETE FROM network_volumes");
  }
}
