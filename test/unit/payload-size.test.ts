import { describe, expect, it } from "vitest";
import { weighs } from "../../src/domain/payload-size.js";

/** `items` behind a proxy that counts how many of them are read. */
function counted(items: unknown[]): { value: unknown[]; reads: () => number } {
  let reads = 0;
  const value = new Proxy(items, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { value, reads: () => reads };
}

describe("weighs: the weight of a payload, counted up to a cap", () => {
  it("weighs small values near their JSON length", () => {
    expect(weighs({ a: "xyz", b: [1, 2] }, 1000)).toBeGreaterThanOrEqual(JSON.stringify({ a: "xyz", b: [1, 2] }).length);
    expect(weighs("x".repeat(100), 1000)).toBe(102);
  });

  it("reads no more of a long array than the cap allows, however long it is (a 10 MB body of small numbers is 5 million items)", () => {
    const { value, reads } = counted(new Array<number>(5_000_000).fill(1));
    expect(weighs({ v: value }, 64 * 1024)).toBeGreaterThan(64 * 1024);
    // Each item weighs a byte at least (its separator): past the cap, the rest is not looked at.
    expect(reads()).toBeLessThanOrEqual(64 * 1024 + 1);
  });

  it("stops at the cap in an object of many keys and in nested arrays alike", () => {
    const wide = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]));
    expect(weighs(wide, 10_000)).toBeGreaterThan(10_000);
    const { value, reads } = counted(Array.from({ length: 1000 }, () => new Array<number>(1000).fill(0)));
    expect(weighs([value], 10_000)).toBeGreaterThan(10_000);
    expect(reads()).toBeLessThanOrEqual(10_001);
  });
});
