import { customAlphabet } from "nanoid";

const hex = customAlphabet("0123456789abcdef", 32);
const lower = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 14);

/**
 * A job id shaped like the real service's (UUID-like with a short suffix, `...-u1`), drawn from
 * nanoid's secure generator: 128 random bits, so ids never repeat, and every character matches
 * `^[A-Za-z0-9_-]+$` as real clients check.
 */
export function newJobId(kind: "run" | "runsync"): string {
  const h = hex();
  const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}-u1`;
  return kind === "runsync" ? `sync-${id}` : id;
}

/** A worker id like the real service's: 14 lower-case letters and digits. */
export const newWorkerId = (): string => lower();

/** A short id for emulator-created resources. */
export const newResourceId = (): string => lower();
