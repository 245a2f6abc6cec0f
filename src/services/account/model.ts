import type { DocumentStore } from "../shared/storage.js";

/** An authorized_keys line, as the account accepts it. */
export const SSH_KEY = /^(ssh|ecdsa|sk)-[^\s]+ [^\s]+([ \t][^\n\r]*)?$/;
export const SSH_KEY_EXPECTED = "expected an authorized_keys line: <type> <base64 key> [comment], such as the content of ~/.ssh/id_ed25519.pub";

interface SshKeysDocument {
  id: "account";
  createdAt: number;
  keys: string[];
}

/**
 * The account's registered SSH public keys (`/v2/account/ssh-keys`): replaced as a whole, put into
 * pods created with `startSsh` (their `PUBLIC_KEY` env). Stored, so they survive a restart.
 */
export class SshKeys {
  constructor(private readonly d: { store: DocumentStore<SshKeysDocument>; clock: { now(): number } }) {}

  list(): string[] {
    return this.d.store.get("account")?.keys ?? [];
  }

  /** Replaces every key; `[]` removes them all. Pods already created keep what they got. */
  replace(keys: readonly string[]): string[] {
    const unique = [...new Set(keys.map((k) => k.trim()))];
    this.d.store.save({ id: "account", createdAt: this.d.clock.now(), keys: unique });
    return unique;
  }

  clear(): void {
    this.d.store.deleteAll();
  }
}
