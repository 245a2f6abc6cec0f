import type { EndpointSpec } from "../domain/endpoint.js";
import type { EndpointStore } from "../domain/ports.js";
import type { Db } from "./db.js";

interface EndpointRow {
  id: string;
  name: string;
  handler: string;
  workers_min: number;
  workers_max: number;
  idle_timeout: number;
  cold_start_ms: number;
  execution_timeout_ms: number | null;
  created_at: number;
  extra: string;
}

const fromRow = (r: EndpointRow): EndpointSpec => ({
  id: r.id,
  name: r.name,
  handler: JSON.parse(r.handler) as EndpointSpec["handler"],
  workersMin: r.workers_min,
  workersMax: r.workers_max,
  idleTimeout: r.idle_timeout,
  coldStartMs: r.cold_start_ms,
  executionTimeoutMs: r.execution_timeout_ms ?? undefined,
  createdAt: r.created_at,
  extra: JSON.parse(r.extra) as Record<string, unknown>,
});

/** Endpoints in SQLite. */
export class SqliteEndpointStore implements EndpointStore {
  private readonly s;

  constructor(private readonly db: Db) {
    this.s = {
      list: db.prepare<[], EndpointRow>(`SELECT * FROM endpoints ORDER BY created_at, id`),
      get: db.prepare<[string], EndpointRow>(`SELECT * FROM endpoints WHERE id = ?`),
      upsert: db.prepare(
        `INSERT OR REPLACE INTO endpoints (id, name, handler, workers_min, workers_max, idle_timeout, cold_start_ms, execution_timeout_ms, created_at, extra)
         VALUES (@id, @name, @handler, @workers_min, @workers_max, @idle_timeout, @cold_start_ms, @execution_timeout_ms, @created_at, @extra)`,
      ),
      delete: db.prepare<[string]>(`DELETE FROM endpoints WHERE id = ?`),
    };
  }

  list(): EndpointSpec[] {
    return this.s.list.all().map(fromRow);
  }

  get(id: string): EndpointSpec | undefined {
    const r = this.s.get.get(id);
    return r ? fromRow(r) : undefined;
  }

  upsert(e: EndpointSpec): void {
    this.s.upsert.run({
      id: e.id,
      name: e.name,
      handler: JSON.stringify(e.handler),
      workers_min: e.workersMin,
      workers_max: e.workersMax,
      idle_timeout: e.idleTimeout,
      cold_start_ms: e.coldStartMs,
      execution_timeout_ms: e.executionTimeoutMs ?? null,
      created_at: e.createdAt,
      extra: JSON.stringify(e.extra),
    });
  }

  delete(id: string): boolean {
    return this.s.delete.run(id).changes > 0;
  }

  deleteAll(): void {
    this.db.exec("DELETE FROM endpoints");
  }
}
