import type { TemplateStore } from "../shared/storage.js";
import type { Template, TemplateFields } from "./templates.js";
import type { Db } from "../../store/db.js";

interface TemplateRow {
  id: string;
  name: string;
  handler: string | null;
  fields: string;
  created_at: number;
  updated_at: number;
}

const fromRow = (r: TemplateRow): Template => {
  // Rows written before startSsh, startJupyter and allowedCudaVersions existed lack them.
  const fields = { startSsh: false, startJupyter: false, allowedCudaVersions: [], ...(JSON.parse(r.fields) as Partial<TemplateFields>) } as TemplateFields & { boundEndpointId?: string };
  return {
    ...fields,
    containerRegistryAuthId: fields.containerRegistryAuthId ?? undefined,
    id: r.id,
    name: r.name,
    handler: r.handler ?? undefined,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
};

/** Templates in SQLite: the queried columns apart, the v1 fields as one JSON document. */
export class SqliteTemplateStore implements TemplateStore {
  private readonly s;

  constructor(private readonly db: Db) {
    this.s = {
      list: db.prepare<[], TemplateRow>(`SELECT * FROM templates ORDER BY created_at, id`),
      get: db.prepare<[string], TemplateRow>(`SELECT * FROM templates WHERE id = ?`),
      save: db.prepare(
        `INSERT OR REPLACE INTO templates (id, name, handler, fields, created_at, updated_at)
         VALUES (@id, @name, @handler, @fields, @created_at, @updated_at)`,
      ),
      delete: db.prepare<[string]>(`DELETE FROM templates WHERE id = ?`),
    };
  }

  list(): Template[] {
    return this.s.list.all().map(fromRow);
  }

  get(id: string): Template | undefined {
    const r = this.s.get.get(id);
    return r ? fromRow(r) : undefined;
  }

  save(t: Template): void {
    const { id, name, handler, createdAt, updatedAt, ...fields } = t;
    this.s.save.run({ id, name, handler: handler ?? null, fields: JSON.stringify(fields), created_at: createdAt, updated_at: updatedAt });
  }

  delete(id: string): boolean {
    return this.s.delete.run(id).changes > 0;
  }

  deleteAll(): void {
    this.db.exec("DELETE FROM templates");
  }
}
