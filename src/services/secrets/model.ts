import { EmulatorError } from "../../domain/errors.js";
import { found, invalidBody } from "../shared/invalid.js";
import type { Documents } from "../shared/storage.js";

/** A secret of the account: its value is given once and never shown again. */
export interface Secret {
  id: string;
  name: string;
  /** Named so that an export redacts it, as it does every secret-named field. */
  secretValue: string;
  description: string;
  createdAt: number;
}

/** What is shown of a secret: never its value. */
export interface SecretView {
  id: string;
  name: string;
  description: string;
  createdAt: string;
}

/** Names as the SDKs take them: letters, digits, `-`, `_` and `.`. */
const NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** `{{ RUNPOD_SECRET_<name> }}`, as the SDKs write a reference to a secret in an env value. */
const REFERENCE = /\{\{\s*RUNPOD_SECRET_([A-Za-z0-9._-]+)\s*\}\}/g;

/**
 * The account's secrets (`secretCreate`, `secretDelete`, `myself { secrets }`): a name, a
 * description and a value that no answer shows. An endpoint's or template's env value may refer to
 * one as `{{ RUNPOD_SECRET_<name> }}`; a worker process gets the value in its stead (`substitute`).
 */
export class SecretService {
  constructor(private readonly d: Documents<Secret>) {}

  list(): SecretView[] {
    return this.d.store.list().map(view);
  }

  create(input: { name: string; value: string; description?: string | null | undefined }): SecretView {
    const errors: string[] = [];
    if (!NAME.test(input.name)) errors.push(`$.name: expected 1 to 128 letters, digits, "-", "_" or ".", got "${input.name}"`);
    if (input.value === "") errors.push("$.value: expected a non-empty value");
    if (errors.length) throw invalidBody(errors);
    if (this.byName(input.name)) throw new EmulatorError("CONFLICT", `a secret named "${input.name}" already exists`);
    const secret: Secret = { id: this.d.newId(), name: input.name, secretValue: input.value, description: input.description ?? "", createdAt: this.d.clock.now() };
    this.d.store.save(secret);
    return view(secret);
  }

  delete(id: string): void {
    found(this.d.store.get(id), "secret", id);
    this.d.store.delete(id);
  }

  /**
   * The env with each `{{ RUNPOD_SECRET_<name> }}` replaced by that secret's value; a reference to
   * a secret the account lacks stays as written, and its name is in `missing`.
   */
  substitute(env: Record<string, string>): { env: Record<string, string>; missing: string[] } {
    const missing = new Set<string>();
    const out: Record<string, string> = {};
    for (const [key, value] of Object.entries(env)) {
      out[key] = value.includes("{{")
        ? value.replace(REFERENCE, (whole, name: string) => {
            const secret = this.d.store.list().find((s) => s.name === name);
            if (!secret) missing.add(name);
            return secret ? secret.secretValue : whole;
          })
        : value;
    }
    return { env: out, missing: [...missing] };
  }

  private byName(name: string): Secret | undefined {
    return this.d.store.list().find((s) => s.name === name);
  }
}

const view = (s: Secret): SecretView => ({ id: s.id, name: s.name, description: s.description, createdAt: new Date(s.createdAt).toISOString() });
