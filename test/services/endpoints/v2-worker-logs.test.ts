import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HandlerContext } from "../../../src/domain/handlers/types.js";
import { inProcess, type InProcess } from "../../support/in-process.js";
import { sseEventReader } from "../../support/sse.js";

const START = Date.parse("2026-05-04T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

/** A handler that writes to its worker's log before and after some work. */
async function chatty(input: Record<string, unknown>, ctx: HandlerContext) {
  ctx.log("loading model", { size: "7b" });
  await ctx.sleep(500);
  if (input.fail) throw new Error("out of memory");
  ctx.log("done");
  return "ok";
}

let e: InProcess;
beforeEach(async () => {
  e = await inProcess({
    config: {
      clock: { mode: "manual", start: START },
      // An empty job-take answers 204 at once, not after 10 s of wall time (a poll only to be seen).
      externalWorkers: { pollHoldMs: 0 },
      endpoints: [
        { id: "chat", handler: "chatty", workersMin: 1, workersMax: 1, coldStartMs: 1000, idleTimeout: 5 },
        { id: "ext", handler: "external" },
      ],
    },
    handlers: { chatty },
  });
});
afterEach(() => e.close());

const open = (path: string, headers: Record<string, string> = {}) => e.stream(path, headers).then(sseEventReader);

describe("/v2/serverless/{id}/workers/{workerId}/logs", () => {
  it("streams a worker's lifecycle, its jobs and what its handler writes with ctx.log", async () => {
    // A configured endpoint's minimum workers are warm at start.
    const worker = (await e.get("/v2/serverless/chat/workers")).body.workers[0].id;
    await e.advance(1000);
    const ok = (await e.post("/v2/chat/run", { input: {} })).body.id;
    await e.advance(500);
    const logs = await open(`/v2/serverless/chat/workers/${worker}/logs`);
    expect((await logs.next(5)).map((ev) => ev.data)).toEqual([
      { source: "system", line: "worker created for endpoint chat: ready at once (warm)", ts: iso(START) },
      { source: "container", line: `job ${ok} started (attempt 1)`, ts: iso(START + 1000) },
      { source: "container", line: 'loading model {"size":"7b"}', ts: iso(START + 1000) },
      { source: "container", line: "done", ts: iso(START + 1500) },
      { source: "container", line: `job ${ok} completed in 500 ms`, ts: iso(START + 1500) },
    ]);
    // Live, as it happens:
    const failing = (await e.post("/v2/chat/run", { input: { fail: true } })).body.id;
    await e.advance(500);
    expect((await logs.next(3)).map((ev) => ev.data.line)).toEqual([`job ${failing} started (attempt 1)`, 'loading model {"size":"7b"}', `job ${failing} failed: out of memory`]);
    await logs.close();
    const system = await open(`/v2/serverless/chat/workers/${worker}/logs?source=system&tail=1`);
    expect((await system.next()).map((ev) => ev.data.line)).toEqual(["worker created for endpoint chat: ready at once (warm)"]);
    await system.close();
  });

  it("ends the stream when the worker is scaled down; its log stays readable", async () => {
    await e.request("PATCH", "/v2/serverless/chat", { workers: { min: 0 } });
    await e.advance(5000); // the warm worker goes
    await e.post("/v2/chat/run", { input: {} }); // a new one starts cold
    const worker = (await e.get("/v2/serverless/chat/workers")).body.workers[0].id;
    const logs = await open(`/v2/serverless/chat/workers/${worker}/logs`);
    await e.advance(1000 + 500 + 5000); // ready, the job, then idle for idleTimeout
    expect((await logs.rest()).map((ev) => ev.data.line)).toEqual([
      "worker created for endpoint chat: cold start of 1000 ms",
      "worker ready: taking jobs",
      expect.stringMatching(/^job \S+ started \(attempt 1\)$/),
      'loading model {"size":"7b"}',
      "done",
      expect.stringMatching(/^job \S+ completed in 500 ms$/),
      "worker stopped",
    ]);
    expect((await e.get("/v2/serverless/chat/workers")).body.workers).toEqual([]);
    const after = await open(`/v2/serverless/chat/workers/${worker}/logs?tail=1`);
    expect((await after.rest()).map((ev) => ev.data.line)).toEqual(["worker stopped"]);
  });

  it("answers 404 for a worker the endpoint never had; a worker process has no lines here", async () => {
    const res = await e.get("/v2/serverless/chat/workers/nobody/logs");
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe('worker "nobody" not found on endpoint "chat"; GET /v2/serverless/chat/workers lists its workers');
    expect((await e.get("/v2/serverless/nope/workers/w/logs")).status).toBe(404);
    await e.get("/v2/ext/job-take/proc-1");
    const proc = await e.stream("/v2/serverless/ext/workers/proc-1/logs");
    expect(proc.status).toBe(200);
    await proc.body?.cancel();
  });
});

describe("/v2/registries/delegations", () => {
  it("registers, lists and revokes ECR delegations read from the repository ARN", async () => {
    const res = await e.post("/v2/registries/delegations", { resource: "arn:aws:ecr:us-east-2:418399314813:repository/runpod/deployment", name: "deploy" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^deleg_[a-z0-9]+$/),
      name: "deploy",
      delegatorUserId: "user_minipod",
      awsUser: "418399314813",
      repository: "runpod/deployment",
      tag: "latest",
      awsRegion: "us-east-2",
      dockerRegistryUri: "418399314813.dkr.ecr.us-east-2.amazonaws.com",
      createdAt: iso(START),
    });
    expect((await e.post("/v2/registries/delegations", { resource: "arn:aws:ecr:eu-west-1:111122223333:repository/app:v2" })).body).toMatchObject({ name: null, repository: "app", tag: "v2" });
    expect((await e.get("/v2/registries/delegations")).body.delegations).toHaveLength(2);
    expect((await e.post("/v2/registries/delegations", { resource: "arn:aws:s3:::bucket" })).status).toBe(400);
    expect((await e.request("DELETE", `/v2/registries/delegations/${res.body.id}`)).status).toBe(204);
    expect((await e.request("DELETE", `/v2/registries/delegations/${res.body.id}`)).status).toBe(404);
    expect((await e.get("/v2/registries/delegations")).body.delegations).toHaveLength(1);
    // The registries listing is not confused by the delegations path.
    expect((await e.get("/v2/registries")).body).toEqual({ registries: [] });
  });
});
