import { afterAll, describe, expect } from "vitest";
import { queueCases } from "./queue.cases.js";
import { socketTransport } from "./transport.js";

// The queue suite over a real socket, driven with fetch: POST /run, POST /runsync, GET /status and the worker
// routes job-take, job-done and job-stream are answered by their fast entries (src/http/fast-routes.ts) whenever those take them, everything else by the app. Each case
// checks who answered its /run, /runsync and /status requests (`answeredBy`); this checks the whole run.
const transport = socketTransport();

describe("queue over HTTP, on a socket (the fast entries of the route table beside Hono)", () => {
  queueCases(transport);

  afterAll(() => {
    // The operation of a queue or worker route (`run`, `status`, `job-take`, ...).
    const kind = (path: string) => /^\/v2\/[^/]+\/([^/?]+)/.exec(path)?.[1] ?? "other";
    const sent = transport.answered.map((r) => ({ ...r, kind: `${r.method} ${kind(r.path)}` }));
    // Whatever cases ran: the fast entries answered some of their requests, and nothing else.
    const fastKinds = ["POST run", "POST runsync", "GET status", "GET job-take", "POST job-done", "POST job-stream"];
    for (const k of fastKinds) {
      if (sent.some((r) => r.kind === k)) expect(sent.filter((r) => r.kind === k && r.by === "direct").length, k).toBeGreaterThan(0);
    }
    const directKinds = new Set(sent.filter((r) => r.by === "direct").map((r) => r.kind));
    expect(directKinds).toEqual(new Set(fastKinds.filter((k) => sent.some((r) => r.kind === k))));
  });
});
