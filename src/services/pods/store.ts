import type { Pod } from "./pod.js";
import type { PodStore } from "./pods.js";
import type { Db } from "../../store/db.js";

interface PodRow {
  id: string;
  data: string;
}

/** Pods in SQLite: the whole pod as JSON, listed in creation order (ties: insertion order). */
export class SqlitePodStore implements PodStore {
  private readonly s;

  constructor(private readonly db: Db) {
    this.s = {
      list: db.prepare<[], PodRow>(`SELECT id, data FROM pods ORDER BY created_at, rowid`),
      get: db.prepare<[string], PodRow>(`SELECT id, data FROM pods WHERE id = ?`),
      // An upsert keeps the row (and its rowid), so a pod keeps its place in creation order.
      save: db.prepare(`INSERT INTO pods (id, created_at, data) VALUES (@id, @created_at, @data) ON CONFLICT (id) DO UPDATE SET data = excluded.data`),
      delete: db.prepare<[string]>(`DELETE FROM pods WHERE id = ?`),
    };
  }

  list(): Pod[] {
    return this.s.list.all().map(fromRow);
  }

  get(id: string): Pod | undefined {
    const r = this.s.get.get(id);
    return r ? fromRow(r) : undefined;
  }

  save(pod: Pod): void {
    this.s.save.run({ id: pod.id, created_at: pod.createdAt, data: JSON.stringify(pod) });
  }

  delete(id: string): boolean {
    return this.s.delete.run(id).changes > 0;
  }

  deleteAll(): void {
    this.db.exec("DELETE FROM pods");
  }
}

// Absent optional fields come back absent, which reads as undefined.
const fromRow = (r: PodRow): Pod => JSON.parse(r.data) as Pod;
