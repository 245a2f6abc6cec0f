import type { RegistryAuth, RegistryAuthStore } from "./registry-auths.js";
import type { Db } from "../../store/db.js";

interface RegistryAuthRow {
  id: string;
  name: string;
  username: string;
  password: string;
  created_at: number;
}

const fromRow = (r: RegistryAuthRow): RegistryAuth => ({ id: r.id, name: r.name, username: r.username, password: r.password, createdAt: r.created_at });

/** Container registry auths in SQLite. The password is stored as given: the emulator holds no real secret. */
export class SqliteRegistryAuthStore implements RegistryAuthStore {
  private readonly s;

  constructor(private readonly db: Db) {
    this.s = {
      list: db.prepare<[], RegistryAuthRow>(`SELECT * FROM registry_auths ORDER BY created_at, rowid`),
      get: db.prepare<[string], RegistryAuthRow>(`SELECT * FROM registry_auths WHERE id = ?`),
      byName: db.prepare<[string], RegistryAuthRow>(`SELECT * FROM registry_auths WHERE name = ?`),
      insert: db.prepare(`INSERT INTO registry_auths (id, name, username, password, created_at) VALUES (@id, @name, @username, @password, @created_at)`),
      delete: db.prepare<[string]>(`DELETE FROM registry_auths WHERE id = ?`),
    };
  }

  list(): RegistryAuth[] {
    return this.s.list.all().map(fromRow);
  }

  get(id: string): RegistryAuth | undefined {
    const r = this.s.get.get(id);
    return r ? fromRow(r) : undefined;
  }

  byName(name: string): RegistryAuth | undefined {
    const r = this.s.byName.get(name);
    return r ? fromRow(r) : undefined;
  }

  insert(a: RegistryAuth): void {
    this.s.insert.run({ id: a.id, name: a.name, username: a.username, password: a.password, created_at: a.createdAt });
  }

  delete(id: string): boolean {
    return this.s.delete.run(id).changes > 0;
  }

  deleteAll(): void {
    this.db.exec("DELETE FROM registry_auths");
  }
}
