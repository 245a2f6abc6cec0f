import { expect } from "vitest";

/**
 * Pushes entries 0, 1, 2... into a ring and drops its oldest, interleaved so that the ring wraps
 * around before and after it grows, checking its length on the way. Returns the range kept.
 */
export function pushAndDrop(ring: { length: number; dropOldest(n: number): void }, push: (n: number) => void): { oldest: number; next: number } {
  let next = 0;
  let oldest = 0;
  for (const [pushed, dropped] of [[200, 150], [200, 0], [300, 120], [1000, 900], [700, 0]] as const) {
    for (let k = 0; k < pushed; k++) push(next++);
    ring.dropOldest(dropped);
    oldest += dropped;
    expect(ring.length).toBe(next - oldest);
  }
  return { oldest, next };
}
