import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

/** `GET /v2/{id}/metrics`: what runpod-flash (and the SDK 2.x) poll during a call, with the ready workers' ids. */
let e: InProcess;
beforeEach(async () => {
  e = await inProcess({ config: { endpoints: [{ id: "warm", handler: "echo", workersMin: 1, coldStartMs: 1000 }, { id: "py", handler: "external" }] } });
});
afterEach(() => e.close());

describe("GET /v2/{endpoint_id}/metrics", () => {
  it("counts the workers as /health does and lists the ready ones", async () => {
    const res = await e.get("/v2/warm/metrics");
    expect(res.status).toBe(200);
    expect(res.body.workers).toEqual((await e.get("/v2/warm/health")).body.workers);
    expect(res.body).toMatchObject({ workers: { idle: 1, ready: 1, initializing: 0 }, readyWorkers: [expect.any(String)] });
  });

  it("lists a worker process that has called in", async () => {
    await e.get("/v2/py/ping/proc-1");
    expect((await e.get("/v2/py/metrics")).body).toMatchObject({ workers: { idle: 1 }, readyWorkers: ["proc-1"] });
  });

  it("404 for an endpoint that does not exist", async () => {
    expect((await e.get("/v2/nope/metrics")).status).toBe(404);
  });
});
