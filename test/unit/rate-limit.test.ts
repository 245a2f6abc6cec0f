import { describe, expect, it } from "vitest";
import { EmulatorError } from "../../src/domain/errors.js";
import { QUEUE_RATE_LIMITS, TIME } from "../../src/domain/limits.js";
import { QueueRateLimiter, RestRateLimiter } from "../../src/domain/rate-limit.js";

/** A clock that moves only when told, like the manual virtual clock. */
const manualTime = (start: number) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

/** 2026-03-04T05:29:48Z: 12 s to the minute, 1812 s to the hour, 66612 s to the day. */
const START = Date.UTC(2026, 2, 4, 5, 29, 48);

const refused = (fn: () => unknown): EmulatorError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof EmulatorError) return e;
    throw e;
  }
  throw new Error("expected the request to be refused");
};

describe("REST rate limiter", () => {
  it("counts each key in fixed windows aligned to the UTC minute, hour and day", () => {
    const t = manualTime(START);
    const rl = new RestRateLimiter(t, { minute: 60, hour: 3000, day: 50_000 });
    const first = rl.take("k1");
    expect(first.allowed).toBe(true);
    expect(first.windows).toEqual([
      { name: "minute", quota: 60, windowSeconds: 60, remaining: 59, resetSeconds: 12 },
      { name: "hour", quota: 3000, windowSeconds: 3600, remaining: 2999, resetSeconds: 1812 },
      { name: "day", quota: 50_000, windowSeconds: 86_400, remaining: 49_999, resetSeconds: 66_612 },
    ]);
    expect(rl.take("k1").windows.map((w) => w.remaining)).toEqual([58, 2998, 49_998]);
    expect(rl.take("other").windows.map((w) => w.remaining)).toEqual([59, 2999, 49_999]);
    t.advance(500);
    expect(rl.take("k1").windows[0]!.resetSeconds).toBe(12); // 11.5 s rounds up
    t.advance(11_500); // the next minute begins
    const next = rl.take("k1");
    expect(next.windows.map((w) => [w.remaining, w.resetSeconds])).toEqual([
      [59, 60],
      [2996, 1800],
      [49_996, 66_600],
    ]);
  });

  it("refuses at the quota without counting, names the window, and lets through after the reset", () => {
    const t = manualTime(START);
    const rl = new RestRateLimiter(t, { minute: 2, hour: 100, day: 1000 });
    expect(rl.take("k").allowed).toBe(true);
    expect(rl.take("k").allowed).toBe(true);
    const third = rl.take("k");
    expect(third.allowed).toBe(false);
    expect(third.exceeded).toMatchObject({ name: "minute", remaining: 0, resetSeconds: 12 });
    expect(third.windows[1]!.remaining).toBe(98); // the refused request used nothing
    t.advance(11_999);
    expect(rl.take("k").allowed).toBe(false);
    t.advance(1);
    expect(rl.take("k").allowed).toBe(true);
  });

  it("reports the exhausted window that resets last", () => {
    const t = manualTime(START);
    const rl = new RestRateLimiter(t, { minute: 2, hour: 2, day: 10 });
    rl.take("k");
    rl.take("k");
    const d = rl.take("k");
    expect(d.exceeded).toMatchObject({ name: "hour", resetSeconds: 1812 });
    t.advance(12_000); // a new minute does not help: the hour is still spent
    expect(rl.take("k").exceeded?.name).toBe("hour");
    t.advance(1800 * TIME.SECOND);
    expect(rl.take("k").allowed).toBe(true);
  });

  it("forgets every count on reset", () => {
    const rl = new RestRateLimiter(manualTime(START), { minute: 1, hour: 10, day: 10 });
    rl.take("k");
    expect(rl.take("k").allowed).toBe(false);
    rl.reset();
    expect(rl.take("k").allowed).toBe(true);
  });
});

describe("queue rate limiter", () => {
  const PURGE = QUEUE_RATE_LIMITS["purge-queue"]!.requests;
  const RUN = QUEUE_RATE_LIMITS.run!;

  it("allows the table's requests per fixed 10 s window, then refuses with Retry-After", () => {
    const t = manualTime(1_000_003_000); // 3 s into a 10 s window
    const q = new QueueRateLimiter(t, 10);
    for (let i = 0; i < PURGE; i++) q.admit("e", "purge-queue", "POST", () => 0)();
    const err = refused(() => q.admit("e", "purge-queue", "POST", () => 0));
    expect(err.code).toBe("RATE_LIMITED");
    expect(err.retryAfter).toBe(7);
    expect(err.message).toMatch(/\/purge-queue on endpoint "e": 2 requests per 10 s/);
    // Per endpoint and per operation.
    expect(() => q.admit("other", "purge-queue", "POST", () => 0)).not.toThrow();
    expect(() => q.admit("e", "run", "POST", () => 0)).not.toThrow();
    t.advance(7000);
    expect(() => q.admit("e", "purge-queue", "POST", () => 0)).not.toThrow();
  });

  it("raises the rate to running workers × requestsPerWorker when that is higher", () => {
    const t = manualTime(0);
    const q = new QueueRateLimiter(t, 10);
    let running = 0;
    for (let i = 0; i < PURGE; i++) q.admit("e", "purge-queue", "POST", () => running);
    expect(() => q.admit("e", "purge-queue", "POST", () => running)).toThrow(EmulatorError);
    running = 3; // 30 per window now
    for (let i = PURGE; i < 30; i++) q.admit("e", "purge-queue", "POST", () => running);
    expect(refused(() => q.admit("e", "purge-queue", "POST", () => running)).message).toMatch(/30 requests per 10 s/);
  });

  it("limits requests in flight and frees a slot when one is answered", () => {
    const q = new QueueRateLimiter(manualTime(0), 0);
    const held = Array.from({ length: RUN.concurrent! }, () => q.admit("e", "run", "POST", () => 0));
    const err = refused(() => q.admit("e", "run", "POST", () => 0));
    expect(err.message).toMatch(/concurrency limit exceeded for \/run on endpoint "e": 200 requests at once/);
    expect(err.retryAfter).toBe(1);
    held[0]!();
    held[0]!(); // releasing twice frees one slot only
    q.admit("e", "run", "POST", () => 0);
    expect(() => q.admit("e", "run", "POST", () => 0)).toThrow(EmulatorError);
  });

  it("counts /status-sync as /status and leaves operations outside the table alone", () => {
    const q = new QueueRateLimiter(manualTime(0), 0);
    const status = QUEUE_RATE_LIMITS.status!;
    for (let i = 0; i < status.concurrent!; i++) q.admit("e", i % 2 ? "status" : "status-sync", "GET", () => 0);
    expect(() => q.admit("e", "status-sync", "GET", () => 0)).toThrow(/\/status on endpoint/);
    for (let i = 0; i < 5000; i++) {
      q.admit("e", "health", "GET", () => 0);
      q.admit("e", "retry", "POST", () => 0);
      q.admit("e", "run", "GET", () => 0); // a 405, not a /run
      q.admit("e", "toString", "GET", () => 0);
    }
  });

  it("takes extra rows (any method), and reports each window before admitting or refusing", () => {
    const t = manualTime(1_000_004_000); // 4 s into a window: 6 s to the next
    const q = new QueueRateLimiter(t, 2, { lb: { method: "*", requests: 2, concurrent: 10 } });
    const seen: unknown[] = [];
    let running = 0;
    const take = (method: string) => q.admit("e", "lb", method, () => running, (w) => seen.push(w));
    take("GET");
    take("DELETE");
    expect(refused(() => take("PUT")).message).toMatch(/rate limit exceeded for requests to load-balancing endpoint "e": 2 requests per 10 s; retry in 6 s/);
    running = 2; // 4 per window now, and the policy says so
    take("POST");
    expect(seen).toEqual([
      { quota: 2, remaining: 1, resetSeconds: 6, windowSeconds: 10 },
      { quota: 2, remaining: 0, resetSeconds: 6, windowSeconds: 10 },
      { quota: 2, remaining: 0, resetSeconds: 6, windowSeconds: 10 },
      { quota: 4, remaining: 1, resetSeconds: 6, windowSeconds: 10 },
    ]);
    // The specification's rows are left as they were.
    expect(() => q.admit("e", "run", "GET", () => 0)).not.toThrow();
  });
});
