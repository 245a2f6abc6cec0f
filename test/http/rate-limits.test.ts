import { parseList } from "structured-headers";
import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

/** 2026-03-04T05:29:48Z: 12 s to the minute, 1812 s to the hour, 66612 s to the day. */
const START = Date.UTC(2026, 2, 4, 5, 29, 48);
const endpoints = [
  { id: "echo", handler: "echo", workersMin: 1, workersMax: 1 },
  { id: "idle", handler: "echo", workersMin: 0, workersMax: 0 },
];
const keys = [{ key: "test-key" }, { key: "exempt", rateLimitExempt: true }];

/** A REST route minipod answers for any authenticated caller (404 until it is served, 200 after). */
const REST = "/v1/endpoints-that-do-not-exist";

describe("REST rate limits", () => {
  let e: InProcess;
  afterEach(() => e.close());

  it("sends RateLimit and RateLimit-Policy as structured-field lists on every authenticated REST answer", async () => {
    e = await inProcess({ clock: { mode: "manual", start: START }, config: { endpoints, auth: { keys } } });
    const first = await e.get(REST);
    expect(first.headers.get("content-type")).toBe("application/problem+json");
    expect(first.headers.get("ratelimit")).toBe('"minute";r=59;t=12, "hour";r=2999;t=1812, "day";r=49999;t=66612');
    expect(first.headers.get("ratelimit-policy")).toBe('"minute";q=60;w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400');
    // What a client parses with an RFC 9651 parser.
    const parsed = parseList(first.headers.get("ratelimit")!).map(([name, params]) => [name, Object.fromEntries(params)]);
    expect(parsed).toEqual([
      ["minute", { r: 59, t: 12 }],
      ["hour", { r: 2999, t: 1812 }],
      ["day", { r: 49999, t: 66612 }],
    ]);
    await e.advance(2000);
    for (const path of ["/v2/pods", "/v2/network-volumes", "/v1/endpoints"]) {
      const res = await e.get(path);
      expect(res.headers.get("ratelimit"), path).toMatch(/^"minute";r=\d+;t=10, "hour";r=\d+;t=1810, "day";r=\d+;t=66610$/);
    }
    expect((await e.get(REST)).headers.get("ratelimit")).toMatch(/^"minute";r=55;/);
  });

  it("answers 429 with Retry-After and both headers over the minute quota, until the window resets", async () => {
    e = await inProcess({ clock: { mode: "manual", start: START }, config: { endpoints, auth: { keys }, rateLimits: { rest: { minute: 3 } } } });
    for (let i = 0; i < 3; i++) expect((await e.get(REST)).status).toBe(404);
    const limited = await e.get(REST);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("content-type")).toBe("application/problem+json");
    expect(limited.body).toEqual({ title: "Too Many Requests", status: 429, detail: "rate limit exceeded for the minute window" });
    expect(limited.headers.get("retry-after")).toBe("12");
    expect(limited.headers.get("ratelimit")).toBe('"minute";r=0;t=12, "hour";r=2997;t=1812, "day";r=49997;t=66612');
    expect(limited.headers.get("ratelimit-policy")).toBe('"minute";q=3;w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400');
    // The queue surface is not the REST surface: its operations carry on and carry no headers.
    const health = await e.get("/v2/echo/health");
    expect(health.status).toBe(200);
    expect(health.headers.get("ratelimit")).toBeNull();
    await e.advance(11_999);
    expect((await e.get(REST)).headers.get("retry-after")).toBe("1");
    await e.advance(1);
    const after = await e.get(REST);
    expect(after.status).toBe(404);
    expect(after.headers.get("ratelimit")).toMatch(/^"minute";r=2;t=60, "hour";r=2996;/);
  });

  it("names the hour window when it is the one spent, and counts per key", async () => {
    e = await inProcess({
      clock: { mode: "manual", start: START },
      config: { endpoints, auth: { keys: [...keys, { key: "second" }] }, rateLimits: { rest: { minute: 5, hour: 5 } } },
    });
    for (let i = 0; i < 5; i++) await e.get(REST);
    const limited = await e.get(REST);
    expect(limited.body.detail).toBe("rate limit exceeded for the hour window");
    expect(limited.headers.get("retry-after")).toBe("1812");
    expect((await e.get(REST, { authorization: "Bearer second" })).status).toBe(404);
  });

  it("counts a 403 and sends the headers with it; sends none to an exempt key or with limits off", async () => {
    e = await inProcess({
      clock: { mode: "manual", start: START },
      config: { endpoints, auth: { keys: [...keys, { key: "queue-only", scopes: ["queue:read"] }] }, rateLimits: { rest: { minute: 2 } } },
    });
    const forbidden = await e.get("/v2/pods", { authorization: "Bearer queue-only" });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get("ratelimit")).toMatch(/^"minute";r=1;/);
    for (let i = 0; i < 10; i++) {
      const res = await e.get(REST, { authorization: "Bearer exempt" });
      expect(res.status).toBe(404);
      expect(res.headers.get("ratelimit")).toBeNull();
      expect(res.headers.get("ratelimit-policy")).toBeNull();
    }
    e.close();
    e = await inProcess({ config: { endpoints, auth: { keys }, rateLimits: { enabled: false, rest: { minute: 1 } } } });
    for (let i = 0; i < 5; i++) {
      const res = await e.get(REST);
      expect(res.status).toBe(404);
      expect(res.headers.get("ratelimit")).toBeNull();
    }
  });

  it("starts counting afresh after /_emulator/reset", async () => {
    e = await inProcess({ config: { endpoints, rateLimits: { rest: { minute: 1 } } } });
    expect((await e.get(REST)).status).toBe(404);
    expect((await e.get(REST)).status).toBe(429);
    expect((await e.post("/_emulator/reset")).status).toBe(200);
    expect((await e.get(REST)).status).toBe(404);
  });
});

// Queue rate and concurrency limits are checked on both transports by the queue suite,
// test/http/queue/queue.cases.ts.
