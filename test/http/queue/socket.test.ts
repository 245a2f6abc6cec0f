import { afterAll, describe, expect } from "vitest";
import { queueCases } from "./queue.cases.js";
import { socketTransport } from "./transport.js";

// The queue suite over a real socket, driven with fetch: POST /run and GET /status are answered by
// their fast entries (src/http/fast-routes.ts) whenever those take them, everything else by the app. Each case
// checks who answered its /run and /status requests (`answeredBy`); this checks the whole run.
const transport = socketTransport();

describe("queue over HTTP, on a socket (the fast entries of the route table beside Hono)", () => {
  queueCases(transport);

  afterAll(() => {
    const kind = (path: string) => (/^\/v2\/[^/]+\/run$/.test(path) ? "run" : /^\/v2\/[^/]+\/status\/[^/?]+$/.test(path) ? "status" : "other");
    const sent = transport.answered.map((r) => ({ ...r, kind: `${r.method} ${kind(r.path)}` }));
    // Whatever cases ran: the fast entries answered some of their /run and /status requests, and nothing else.
    for (const k of ["POST run", "GET status"]) {
      if (sent.some((r) => r.kind === k)) expect(sent.filter((r) => r.kind === k && r.by === "direct").length, k).toBeGreaterThan(0);
    }
    expect(new Set(sent.filter((r) => r.by === "direct").map((r) => r.kind))).toEqual(new Set(["POST run", "GET status"].filter((k) => sent.some((r) => r.kind === k))));
  });
});
