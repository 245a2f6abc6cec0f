import { TrieRouter } from "hono/router/trie-router";
import { describe, expect, it } from "vitest";
import { RecentPathsRouter } from "../../src/http/router.js";

describe("the router keeping recent paths' matches", () => {
  const routes: Array<[string, string, string]> = [
    ["ALL", "*", "gate"],
    ["GET", "/v2/:endpoint_id/status/:job_id", "status"],
    ["GET", "/v2/:endpoint_id/health", "health"],
    ["GET", "/v2/network-volumes/:id", "volume"],
    ["POST", "/v2/:endpoint_id/run", "run"],
  ];
  const both = () => {
    const kept = new RecentPathsRouter<string>();
    const trie = new TrieRouter<string>();
    for (const [m, p, h] of routes) {
      kept.add(m, p, h);
      trie.add(m, p, h);
    }
    return { kept, trie };
  };

  it("answers what the trie router answers, the first time and the next", () => {
    const { kept, trie } = both();
    const asks: Array<[string, string]> = [
      ["GET", "/v2/echo/status/abc"],
      ["GET", "/v2/echo/status/abc"],
      ["GET", "/v2/network-volumes/v1"],
      ["POST", "/v2/echo/status/abc"],
      ["POST", "/v2/echo/run"],
      ["GET", "/v2/echo/run"],
      ["GET", "/nowhere"],
    ];
    for (const [m, p] of asks) expect(kept.match(m, p)).toEqual(trie.match(m, p));
    expect(kept.match("GET", "/v2/echo/status/abc")).toBe(kept.match("GET", "/v2/echo/status/abc"));
  });

  it("forgets its matches when a route is added, and keeps a bounded number", () => {
    const { kept } = both();
    const before = kept.match("GET", "/v2/echo/ping");
    expect(before[0].map(([h]) => h)).toEqual(["gate"]);
    kept.add("GET", "/v2/:endpoint_id/ping", "ping");
    expect(kept.match("GET", "/v2/echo/ping")[0].map(([h]) => h)).toEqual(["gate", "ping"]);
    const first = kept.match("GET", "/v2/e0/health");
    for (let i = 1; i <= 2_000; i++) kept.match("GET", `/v2/e${i}/health`);
    expect(kept.match("GET", "/v2/e0/health")).not.toBe(first); // the oldest left, and was matched again
    expect(kept.match("GET", "/v2/e0/health")).toEqual(first);
    // Methods are bounded as well: past 16, a method's matches are not kept, but still right.
    for (let i = 0; i < 20; i++) kept.match(`M${i}`, "/v2/e0/health");
    expect(kept.match("M19", "/v2/e0/health")).not.toBe(kept.match("M19", "/v2/e0/health"));
    expect(kept.match("M19", "/v2/e0/health")).toEqual(kept.match("M0", "/v2/e0/health"));
    expect(kept.match("M0", "/v2/e0/health")).toBe(kept.match("M0", "/v2/e0/health"));
  });

  it("hands Hono one handler for the handlers matched, made once per list, with the route's params", () => {
    const made: string[][] = [];
    const router = new RecentPathsRouter<string>((handlers) => {
      made.push(handlers);
      return handlers.join("+");
    });
    for (const [m, p, h] of routes) router.add(m, p, h);
    expect(router.match("GET", "/v2/echo/status/abc")).toEqual([[["gate+status", { endpoint_id: "echo", job_id: "abc" }]]]);
    expect(router.match("GET", "/v2/other/status/xyz")).toEqual([[["gate+status", { endpoint_id: "other", job_id: "xyz" }]]]);
    expect(router.match("GET", "/nowhere")).toEqual([[["gate", {}]]]);
    expect(made).toEqual([["gate", "status"], ["gate"]]);
  });

  it("leaves to Hono's chain a match whose routes disagree on their params", () => {
    const router = new RecentPathsRouter<string>((handlers) => handlers.join("+"));
    for (const [m, p, h] of routes) router.add(m, p, h);
    // `/v2/network-volumes/health` is a volume id to one route and an endpoint id to the other.
    expect(router.match("GET", "/v2/network-volumes/health")[0].map(([h, p]) => [h, p])).toEqual([
      ["gate", {}],
      ["health", { endpoint_id: "network-volumes" }],
      ["volume", { id: "health" }],
    ]);
  });

  it("says a segment is only ever a plain param when no route has it as a literal and none matches by a pattern: paths differing there match alike", () => {
    const { kept, trie } = both();
    kept.add("POST", "/v2/:endpoint_id/job-done/:worker_id/:job_id", "done");
    trie.add("POST", "/v2/:endpoint_id/job-done/:worker_id/:job_id", "done");
    expect(kept.paramOnly("job-1")).toBe(true);
    for (const literal of ["v2", "status", "health", "network-volumes", "run", "job-done", ""]) expect(kept.paramOnly(literal), literal).toBe(false);
    // What the trie answers for two such paths differs only in the param.
    const a = trie.match("POST", "/v2/e/job-done/w/job-1")[0] as Array<[string, Record<string, string>]>;
    const b = trie.match("POST", "/v2/e/job-done/w/job-2")[0] as Array<[string, Record<string, string>]>;
    expect(b).toEqual(a.map(([h, p]) => [h, p.job_id === undefined ? p : { ...p, job_id: "job-2" }]));
    // A route matching a segment by a pattern (a regex param, a prefix wildcard): no segment is said to be.
    for (const path of ["/v2/:endpoint_id/job-done/:worker_id/:n{[0-9]+}", "/files/img*"]) {
      const router = new RecentPathsRouter<string>();
      router.add("GET", "/v2/:endpoint_id/health", "health");
      expect(router.paramOnly("job-1")).toBe(true);
      router.add("GET", path, "patterned");
      expect(router.paramOnly("job-1"), path).toBe(false);
    }
  });
});
