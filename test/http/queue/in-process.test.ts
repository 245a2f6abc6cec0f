import { describe } from "vitest";
import { queueCases } from "./queue.cases.js";
import { inProcessTransport } from "./transport.js";

// The queue suite through `app.request`: the Hono app answers every request.
describe("queue over HTTP, in process (app.request)", () => {
  queueCases(inProcessTransport());
});
