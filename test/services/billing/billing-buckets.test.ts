import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUCKET_SIZES, bucketEndCeil, bucketStart, forEachBucket, nextBucket } from "../../../src/services/billing/buckets.js";

const t = (s: string) => Date.parse(s);

describe("billing buckets (UTC)", () => {
  it("starts hours, days, Monday weeks, months and years where the calendar does", () => {
    const at = t("2024-02-29T13:45:10.5Z"); // a Thursday in a leap year
    expect(new Date(bucketStart(at, "hour")).toISOString()).toBe("2024-02-29T13:00:00.000Z");
    expect(new Date(bucketStart(at, "day")).toISOString()).toBe("2024-02-29T00:00:00.000Z");
    expect(new Date(bucketStart(at, "week")).toISOString()).toBe("2024-02-26T00:00:00.000Z");
    expect(new Date(bucketStart(t("2024-03-03T23:00:00Z"), "week")).toISOString()).toBe("2024-02-26T00:00:00.000Z"); // Sunday
    expect(new Date(bucketStart(t("2024-03-04T00:00:00Z"), "week")).toISOString()).toBe("2024-03-04T00:00:00.000Z"); // Monday
    expect(new Date(bucketStart(at, "month")).toISOString()).toBe("2024-02-01T00:00:00.000Z");
    expect(new Date(bucketStart(at, "year")).toISOString()).toBe("2024-01-01T00:00:00.000Z");
    expect(new Date(nextBucket(t("2024-02-01T00:00:00Z"), "month")).toISOString()).toBe("2024-03-01T00:00:00.000Z");
    expect(new Date(nextBucket(t("2024-12-01T00:00:00Z"), "month")).toISOString()).toBe("2025-01-01T00:00:00.000Z");
    expect(bucketEndCeil(t("2024-02-29T00:00:00Z"), "day")).toBe(t("2024-02-29T00:00:00Z"));
    expect(bucketEndCeil(t("2024-02-29T00:00:00.001Z"), "day")).toBe(t("2024-03-01T00:00:00Z"));
  });

  it("splits an interval into pieces that cover it exactly, each inside one bucket", () => {
    const range = fc.integer({ min: t("2020-01-01T00:00:00Z"), max: t("2030-01-01T00:00:00Z") });
    fc.assert(
      fc.property(range, fc.integer({ min: 0, max: 400 * 86_400_000 }), fc.constantFrom(...BUCKET_SIZES), (from, length, size) => {
        const to = from + length;
        let total = 0;
        // An interval of 400 days is up to 9,600 hourly pieces: each is checked with plain
        // comparisons, and the property makes one assertion, so a run costs the same on a busy
        // machine as the code under test does (an expect() per piece made it take a minute).
        const wrong: string[] = [];
        forEachBucket(from, to, size, (bucket, ms) => {
          if (bucketStart(bucket, size) !== bucket) wrong.push(`${bucket} is not the start of its ${size}`);
          if (!(ms > 0)) wrong.push(`a piece of ${ms} ms at ${bucket}`);
          if (ms > nextBucket(bucket, size) - bucket) wrong.push(`${ms} ms do not fit in the ${size} at ${bucket}`);
          total += ms;
        });
        expect(wrong.slice(0, 3)).toEqual([]);
        expect(total).toBe(length);
      }),
      { numRuns: 300 },
    );
  });
});
