import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import { toProblem } from "../../src/http/problem.js";

// The answers themselves (404, 405, 401/403, 400, 413, 429 as problem+json) are checked on both
// transports by the queue suite, test/http/queue/queue.cases.ts.
describe("errors are problem+json everywhere", () => {
  it("maps a 415 from request validation to problem+json", () => {
    // The OpenAPI validator raises 415 for a declared non-JSON type on a route without jsonBody.
    expect(toProblem(new HTTPException(415, { message: "Unsupported Media Type" })).problem).toEqual({
      title: "Unsupported Media Type",
      status: 415,
      detail: "send the body as JSON with the header Content-Type: application/json",
    });
  });
});
