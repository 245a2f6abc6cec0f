import { randomFillSync } from "node:crypto";
import { customAlphabet } from "nanoid";

/**
 * Random bytes drawn a few kilobytes at a time (node's secure generator), 8 bytes an id: its 16
 * random hex digits are one `toString("hex")` of them, about a third of what nanoid's
 * character-by-character draw of the same 16 digits took (every `/run` makes one).
 */
const random = Buffer.alloc(8 * 512);
let randomAt = random.length;
function hex16(): string {
  if (randomAt === random.length) {
    randomFillSync(random);
    randomAt = 0;
  }
  const text = random.toString("hex", randomAt, randomAt + 8);
  randomAt += 8;
  return text;
}
const lower = customAlphabet("0123456789abcdefghijklmnopqrstuvwxyz", 14);

let lastMs = 0;
let lastMsHex = "000000000000";
let seqInMs = 0;

/**
 * 16 hex digits that grow with every call: the ms `now` (12 digits, as in a UUIDv7) and a count
 * within that ms (4 digits). Never smaller than the last, even when time stands still (the manual
 * clock) or steps back (a snapshot restored).
 */
function orderedPrefix(now: number): string {
  const ms = Math.max(0, Math.floor(now));
  if (ms > lastMs) {
    lastMs = ms;
    lastMsHex = ms.toString(16).padStart(12, "0");
    seqInMs = 0;
  } else if (++seqInMs > 0xffff) {
    lastMs += 1;
    lastMsHex = lastMs.toString(16).padStart(12, "0");
    seqInMs = 0;
  }
  // The ms (beyond 32 bits) is converted once per ms: radix conversion of such a number is slow.
  return lastMsHex + (0x10000 + seqInMs).toString(16).slice(1);
}

/**
 * A job id shaped like the real service's (UUID-like with a short suffix, `...-u1`; every
 * character matches `^[A-Za-z0-9_-]+$` as real clients check). Its first 16 hex digits grow with
 * each id (virtual creation time in ms, then a count), the last 16 are random (nanoid's secure generator):
 * ids never repeat, and they sort by creation, so a new job's row and timeline go at the end of
 * their indexes instead of at a random place in them (two job inserts cost a third as much).
 */
export function newJobId(kind: "run" | "runsync", now: number): string {
  const p = orderedPrefix(now);
  const r = hex16();
  const id = `${p.slice(0, 8)}-${p.slice(8, 12)}-${p.slice(12, 16)}-${r.slice(0, 4)}-${r.slice(4)}-u1`;
  return kind === "runsync" ? `sync-${id}` : id;
}

/** A worker id like the real service's: 14 lower-case letters and digits. */
export const newWorkerId = (): string => lower();

/** A short id for emulator-created resources. */
export const newResourceId = (): string => lower();
