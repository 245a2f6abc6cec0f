import { EmulatorError } from "../../domain/errors.js";
import { invalidBody } from "../shared/invalid.js";
import type { Documents } from "../shared/storage.js";

/** A Flash app: a name that `flash deploy` and `rp flash deploy` put environments and builds under. */
export interface FlashApp {
  id: string;
  name: string;
  createdAt: number;
}

/**
 * Flash apps, unique by name. An app owns its environments and builds: deleting it deletes them
 * (`forget` is given what the other two services do for that).
 */
export class FlashAppService {
  constructor(private readonly d: Documents<FlashApp> & { forget: (appId: string) => void }) {}

  list(): FlashApp[] {
    return this.d.store.list();
  }

  get(id: string): FlashApp {
    const app = this.d.store.get(id);
    if (!app) throw new EmulatorError("NOT_FOUND", `flash app not found: there is no app with id "${id}"`);
    return app;
  }

  /** The app of this name; "app not found" is how the clients tell an app to create from one that exists. */
  byName(name: string): FlashApp {
    const app = this.list().find((a) => a.name === name);
    if (!app) throw new EmulatorError("NOT_FOUND", `flash app not found: there is no app named "${name}"`);
    return app;
  }

  create(name: string): FlashApp {
    if (name.trim() === "") throw invalidBody(["$.name: expected a non-empty app name"]);
    if (this.list().some((a) => a.name === name)) throw new EmulatorError("CONFLICT", `a flash app named "${name}" already exists`);
    const app: FlashApp = { id: this.d.newId(), name, createdAt: this.d.clock.now() };
    this.d.store.save(app);
    return app;
  }

  delete(id: string): void {
    this.get(id);
    this.d.forget(id);
    this.d.store.delete(id);
  }
}
