import { HTTPException } from "hono/http-exception";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toProblem } from "../../src/http/problem.js";
import { inProcess, type InProcess, type Reply } from "../support/in-process.js";

const config = {
  endpoints: [{ id: "echo", handler: "echo", workersMin: 1, workersMax: 1 }],
  auth: { keys: [{ key: "test-key" }, { key: "reader", scopes: ["queue:read" as const] }] },
  rateLimits: { rest: { minute: 1000 } },
};

/** The ErrorResponse of the specification, nothing else. */
function expectProblem(res: Reply, status: number, title: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toEqual({ title, status, detail: expect.any(String), ...(res.body?.errors ? { errors: expect.any(Array) } : {}) });
  expect(res.body.detail.length).toBeGreaterThan(0);
}

describe("errors are problem+json everywhere", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("answers unknown routes with 404, inside and outside the service surfaces", async () => {
    for (const path of ["/v2/echo/nothing-here", "/v2/echo", "/v2", "/v1/unknown", "/v2/pods/abc/def", "/nowhere", "/_emulator/nothing"]) {
      const res = await e.get(path);
      expectProblem(res, 404, "Not Found");
      expect(res.body.detail, path).toContain(path);
    }
  });

  it("answers a known path with the wrong method 405 with Allow", async () => {
    const cases: Array<[string, string, string]> = [
      ["DELETE", "/v2/echo/run", "POST"],
      ["GET", "/v2/echo/runsync", "POST"],
      ["POST", "/v2/echo/status/abc", "GET, HEAD"],
      ["PUT", "/v2/echo/health", "GET, HEAD"],
      ["POST", "/_emulator/clock", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await e.request(method, path, method === "GET" ? undefined : {});
      expectProblem(res, 405, "Method Not Allowed");
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
      expect(res.body.detail).toBe(`${method} is not allowed on ${path}; it accepts ${allow}`);
    }
  });

  it("checks the key before the route: 401 and 403 come first", async () => {
    expectProblem(await e.get("/v2/echo/nothing-here", { authorization: "" }), 401, "Unauthorized");
    expectProblem(await e.request("DELETE", "/v2/echo/run", undefined, { authorization: "Basic abc" }), 401, "Unauthorized");
    expectProblem(await e.post("/v2/echo/run", { input: {} }, { authorization: "Bearer reader" }), 403, "Forbidden");
  });

  it("answers 400 with errors[] for invalid bodies, queries and JSON", async () => {
    const body = await e.post("/v2/echo/run", { input: {}, policy: { ttl: 5 } });
    expectProblem(body, 400, "Bad Request");
    expect(body.body.errors).toEqual(["$.policy.ttl: expected number >= 10000"]);
    const query = await e.post("/v2/echo/runsync?wait=abc", { input: {} });
    expectProblem(query, 400, "Bad Request");
    expect(query.body.errors).toEqual(["query.wait: expected integer"]);
    expectProblem(await e.request("POST", "/v2/echo/run", "{oops"), 400, "Bad Request");
  });

  it("answers 413 for a body declared over the limit", async () => {
    const res = await e.request("POST", "/v2/echo/run", "{}", { "content-length": String(10 * 1024 * 1024 + 1) });
    expectProblem(res, 413, "Payload Too Large");
  });

  it("answers 429 with Retry-After", async () => {
    for (let i = 0; i < 2; i++) await e.post("/v2/echo/purge-queue");
    const res = await e.post("/v2/echo/purge-queue");
    expectProblem(res, 429, "Too Many Requests");
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("maps a 415 from request validation to problem+json", () => {
    // The OpenAPI validator raises 415 for a declared non-JSON type on a route without jsonBody.
    expect(toProblem(new HTTPException(415, { message: "Unsupported Media Type" })).problem).toEqual({
      title: "Unsupported Media Type",
      status: 415,
      detail: "send the body as JSON with the header Content-Type: application/json",
    });
  });
});
