import type { IncomingMessage, ServerResponse } from "node:http";
import type { MiddlewareHandler } from "hono";
import { describe, expect, it } from "vitest";
import { RouteTable, type FastEntry, type Matcher } from "../../src/http/route-table.js";

// The route table keeps, per path, which fast entry answers it (2,000 paths a method), so that
// the app's router is asked once per path. A worker's job-done has a path per job: those are
// kept apart, and do not push out the paths used again and again.

const gate: MiddlewareHandler = async (_c, next) => next();

/** A table whose app routes `/v2/e/runsync`, `/v2/e/status/{id}` and `/v2/e/job-done/w/{id}`, each to its entry; counts the router's matches. */
function table() {
  const asked: string[] = [];
  const entry = (oneOff: boolean): FastEntry & { taken: number } => ({ oneOff, taken: 0, accepts: () => ({}), take() { this.taken++; return true; } });
  const entries = { "/v2/:e/runsync": entry(false), "/v2/:e/status/:id": entry(false), "/v2/:e/job-done/:w/:id": entry(true) };
  const match: Matcher = (_method, path) => {
    asked.push(path);
    const route = path.includes("/job-done/") ? "/v2/:e/job-done/:w/:id" : path.includes("/status/") ? "/v2/:e/status/:id" : "/v2/:e/runsync";
    return [
      [[gate, { handler: gate, path: "/*", method: "ALL", basePath: "/" }], {}],
      [[() => {}, { handler: () => {}, path: route, method: "POST", basePath: "/" }], {}],
    ] as never;
  };
  const t = new RouteTable({ armed: () => false }, gate, match);
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
});
