const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * A resource id derived from a seed string (FNV-1a, 64 bits), for resources declared in the
 * config without an id: the same declaration gets the same id at every start, so a file
 * database is not filled with copies. Letters and digits only, like generated ids.
 */
export function stableId(seed: string): string {
  let h = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  const mask = (1n << 64n) - 1n;
  for (const byte of new TextEncoder().encode(seed)) {
    h ^= BigInt(byte);
    h = (h * prime) & mask;
  }
  let out = "";
  // 12 base-36 digits hold the 64 bits.
  for (let i = 0; i < 12; i++) {
    out += ALPHABET[Number(h % 36n)];
    h /= 36n;
  }
  return out;
}
