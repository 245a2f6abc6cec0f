/**
 * Billing time buckets in UTC: an hour, a day, a week starting on Monday (ISO 8601), a calendar
 * month or a calendar year. Pure functions of epoch milliseconds.
 */

export const BUCKET_SIZES = ["hour", "day", "week", "month", "year"] as const;
export type BucketSize = (typeof BUCKET_SIZES)[number];

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The shortest a bucket of each size can be (February, a common year): for counting buckets from above. */
export const BUCKET_MIN_MS: Readonly<Record<BucketSize, number>> = { hour: HOUR, day: DAY, week: 7 * DAY, month: 28 * DAY, year: 365 * DAY };

/** Start of the bucket holding `t`. */
export function bucketStart(t: number, size: BucketSize): number {
  const d = new Date(t);
  switch (size) {
    case "hour":
      return Math.floor(t / HOUR) * HOUR;
    case "day":
      return Math.floor(t / DAY) * DAY;
    case "week": {
      const day = Math.floor(t / DAY) * DAY;
      // getUTCDay: 0 is Sunday; Monday starts the week.
      return day - ((d.getUTCDay() + 6) % 7) * DAY;
    }
    case "month":
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    case "year":
      return Date.UTC(d.getUTCFullYear(), 0, 1);
  }
}

/** Start of the bucket after the one starting at `start` (which must be a bucket start). */
export function nextBucket(start: number, size: BucketSize): number {
  const d = new Date(start);
  switch (size) {
    case "hour":
      return start + HOUR;
    case "day":
      return start + DAY;
    case "week":
      return start + 7 * DAY;
    case "month":
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    case "year":
      return Date.UTC(d.getUTCFullYear() + 1, 0, 1);
  }
}

/** End of the bucket `t` falls in, or `t` itself when it is already a bucket boundary. */
export function bucketEndCeil(t: number, size: BucketSize): number {
  const start = bucketStart(t, size);
  return start === t ? t : nextBucket(start, size);
}

/**
 * Splits [from, to) at bucket boundaries and calls `fn(bucket, ms)` for each non-empty piece.
 */
export function forEachBucket(from: number, to: number, size: BucketSize, fn: (bucket: number, ms: number) => void): void {
  let b = bucketStart(from, size);
  while (b < to) {
    const next = nextBucket(b, size);
    const ms = Math.min(to, next) - Math.max(from, b);
    if (ms > 0) fn(b, ms);
    b = next;
  }
}
