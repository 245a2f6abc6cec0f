import type { IncomingMessage, ServerResponse } from "node:http";
import type { MiddlewareHandler } from "hono";
import { describe, expect, it } from "vitest";
import { RouteTable, type FastEntry, type Matcher } from "../../src/http/route-table.js";

// The route table keeps, per path, which fast entry answers it (2,000 paths a method), so that
// the app's router is asked once per path. A worker's job-done has a path per job: those are
// kept apart, and do not push out the paths used again and again.

const gate: MiddlewareHandler = async (_c, next) => next();

/**
 * A table whose app routes `/v2/e/runsync`, `/v2/e/status/{id}` and `/v2/e/job-done/{w}/{id}`, each
 * to its entry; counts the router's matches. `paramOnly`: as the app's router says it of a segment
 * (by default: none of its routes' literal segments).
 */
function table(paramOnly = (segment: string) => segment !== "" && !["v2", "e", "runsync", "status", "job-done"].includes(segment)) {
  const asked: string[] = [];
  const entry = (oneOff: boolean): FastEntry & { taken: number; params: Record<string, string>[] } => ({
    oneOff,
    taken: 0,
    params: [],
    accepts(_method, _path, params) {
      this.params.push(params);
      return {};
    },
    take() {
      this.taken++;
      return true;
    },
  });
  const entries = { "/v2/:e/runsync": entry(false), "/v2/:e/status/:id": entry(false), "/v2/:e/job-done/:w/:id": entry(true) };
  const match: Matcher = (_method, path) => {
    asked.push(path);
    const route = path.includes("/job-done/") ? "/v2/:e/job-done/:w/:id" : path.includes("/status/") ? "/v2/:e/status/:id" : "/v2/:e/runsync";
    const parts = path.split("/");
    const params = route.includes("job-done") ? { e: parts[2]!, w: parts[4]!, id: parts[5]! } : {};
    return [
      [[gate, { handler: gate, path: "/*", method: "ALL", basePath: "/" }], {}],
      [[() => {}, { handler: () => {}, path: route, method: "POST", basePath: "/" }], params],
    ] as never;
  };
  const t = new RouteTable({ armed: () => false }, gate, match, paramOnly);
  for (const [path, e] of Object.entries(entries)) t.add("POST", path.replace(/:(\w+)/g, "{$1}"), e);
  const send = (url: string) => t.take({ method: "POST", url } as IncomingMessage, {} as ServerResponse);
  return { asked, send, entries };
}

describe("the route table's paths", () => {
  it("a path per job-done does not push out the paths used again and again", () => {
    const { asked, send, entries } = table();
    expect(send("/v2/e/runsync")).toBe(true);
    for (let i = 0; i < 50; i++) send(`/v2/e/status/job-${i}`);
    for (let i = 0; i < 5_000; i++) expect(send(`/v2/e/job-done/w/job-${i}?gpu=x`)).toBe(true);
    asked.length = 0;
    send("/v2/e/runsync");
    for (let i = 0; i < 50; i++) send(`/v2/e/status/job-${i}`);
    // Still known: the router is not asked again.
    expect(asked).toEqual([]);
    expect(entries["/v2/:e/job-done/:w/:id"].taken).toBe(5_000);
  });

  it("a job-done path seen a moment ago is still known (a job's progress updates and its result)", () => {
    const { asked, send } = table();
    send("/v2/e/job-done/w/j1");
    send("/v2/e/job-done/w/j1");
    expect(asked).toEqual(["/v2/e/job-done/w/j1"]);
  });

  it("the job-done paths of one worker (a folder) ask the router once: each job's id is the route's param, as it was for the first", () => {
    const { asked, send, entries } = table();
    for (let i = 0; i < 100; i++) expect(send(`/v2/e/job-done/w/job-${i}?gpu=x`)).toBe(true);
    expect(asked).toEqual(["/v2/e/job-done/w/job-0"]);
    const done = entries["/v2/:e/job-done/:w/:id"];
    expect(done.taken).toBe(100);
    expect(done.params[99]).toEqual({ e: "e", w: "w", id: "job-99" });
    // Another worker's folder: asked once too.
    send("/v2/e/job-done/w2/job-0");
    send("/v2/e/job-done/w2/job-1");
    expect(asked).toEqual(["/v2/e/job-done/w/job-0", "/v2/e/job-done/w2/job-0"]);
    expect(done.params.at(-1)).toEqual({ e: "e", w: "w2", id: "job-1" });
  });

  it("a last segment that a route has as a literal, or any segment while a route matches by a pattern, is the router's to match", () => {
    const literal = table();
    literal.send("/v2/e/job-done/w/job-0");
    literal.send("/v2/e/job-done/w/status");
    expect(literal.asked).toEqual(["/v2/e/job-done/w/job-0", "/v2/e/job-done/w/status"]);
    const patterned = table(() => false);
    for (let i = 0; i < 3; i++) patterned.send(`/v2/e/job-done/w/job-${i}`);
    expect(patterned.asked).toEqual(["/v2/e/job-done/w/job-0", "/v2/e/job-done/w/job-1", "/v2/e/job-done/w/job-2"]);
  });
});
