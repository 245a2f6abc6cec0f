import { EmulatorError } from "../../domain/errors.js";
import { newResourceId } from "../../domain/ids.js";
import { found, invalidBody } from "../shared/invalid.js";
import type { DocumentStore } from "../shared/storage.js";

/** Credentials for a private container registry. The password is a secret: never shown. */
export interface RegistryAuth {
  id: string;
  name: string;
  username: string;
  password: string;
  createdAt: number;
}

/** What is shown of a registry auth: neither the username nor the password. */
export interface RegistryAuthView {
  id: string;
  name: string;
}

export interface RegistryAuthCreate {
  name: string;
  username: string;
  password: string;
}

/**
 * Container registry auths of the management surface (`/v1/containerregistryauth`): create,
 * list, get, delete. Names are unique; an auth a pod or template still uses cannot be deleted.
 */
export class RegistryAuthService {
  constructor(
    private readonly d: {
      clock: { now(): number };
      store: DocumentStore<RegistryAuth>;
      /** Who uses the auth ("pod abc"), if anyone; deletion is refused while it is used. */
      usedBy: (id: string) => string | undefined;
    },
  ) {}

  list(): RegistryAuthView[] {
    return this.d.store.list().map(view);
  }

  get(id: string): RegistryAuthView {
    return view(this.require(id));
  }

  exists(id: string): boolean {
    return this.d.store.get(id) !== undefined;
  }

  create(input: RegistryAuthCreate, id: string = newResourceId()): RegistryAuthView {
    if (this.d.store.get(id)) throw new EmulatorError("CONFLICT", `container registry auth "${id}" already exists`);
    if (this.byName(input.name)) throw invalidBody([`$.name: a container registry auth named "${input.name}" already exists (names are unique)`]);
    const auth: RegistryAuth = { id, name: input.name, username: input.username, password: input.password, createdAt: this.d.clock.now() };
    this.d.store.save(auth);
    return view(auth);
  }

  /** Replaces the credentials of an auth (its name stays): what the GraphQL API's updateRegistryAuth does. */
  changeCredentials(id: string, creds: { username: string; password: string }): RegistryAuthView {
    const auth = { ...this.require(id), username: creds.username, password: creds.password };
    this.d.store.save(auth);
    return view(auth);
  }

  delete(id: string): void {
    this.require(id);
    const user = this.d.usedBy(id);
    if (user) throw new EmulatorError("INVALID_STATE", `container registry auth "${id}" is used by ${user}; change or delete that first`);
    this.d.store.delete(id);
  }

  /** The auth of that name: names are unique. A scan: an account holds a handful of auths. */
  byName(name: string): RegistryAuthView | undefined {
    const auth = this.d.store.list().find((a) => a.name === name);
    return auth && view(auth);
  }

  private require(id: string): RegistryAuth {
    return found(this.d.store.get(id), "container registry auth", id);
  }
}

const view = (a: RegistryAuth): RegistryAuthView => ({ id: a.id, name: a.name });
