import { describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/domain/observability.js";
import { RequestQueue } from "../../src/store/request-queue.js";
import { pushAndDrop } from "./ring-script.js";

const record = (n: number): RequestRecord => ({
  method: n % 2 ? "POST" : "GET",
  path: `/v2/ep/status/${n}`,
  query: n % 4 ? undefined : `wait=${n}`,
  endpoint: n % 3 ? "ep" : undefined,
  operation: n % 5 ? "status" : undefined,
  status: 200 + (n % 400),
  at: 1_790_000_000_000 + n,
  durationMs: n / 100,
  bodyText: n % 2 ? `{"input":{"n":${n}}}` : undefined,
  responseText: n % 7 ? undefined : `{"status":${400 + n}}`,
});

describe("RequestQueue", () => {
  it("gives back every entry as it was pushed, oldest first, across growth, wrap-around and drops", () => {
    const q = new RequestQueue();
    const { oldest, next } = pushAndDrop(q, (n) => q.push(record(n)));
    const all = q.takeAll();
    expect(all).toEqual(Array.from({ length: next - oldest }, (_, k) => record(oldest + k)));
    expect(q.length).toBe(0);
    expect(q.takeAll()).toEqual([]);
    q.push(record(1));
    q.dropOldest(5); // more than there are
    expect(q.length).toBe(0);
    q.push(record(2));
    q.clear();
    expect(q.takeAll()).toEqual([]);
  });
});
