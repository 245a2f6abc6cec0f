import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

const config = {
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 1000 },
    { id: "work", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 2000, idleTimeout: 5 },
  ],
};

describe("queue operations over HTTP", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("runs a job from /run to COMPLETED with the real envelope", async () => {
    const run = await e.post("/v2/echo/run", { input: { hello: "world" } });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), status: "IN_QUEUE" });
    await e.advance(0);
    const status = await e.get(`/v2/echo/status/${run.body.id}`);
    expect(status.status).toBe(200);
    expect(status.body).toEqual({
      id: run.body.id,
      status: "COMPLETED",
      delayTime: 0,
      executionTime: 0,
      output: { hello: "world" },
      workerId: expect.stringMatching(/^[a-z0-9]{14}$/),
    });
  });

  it("answers /status as JSON that follows the job: a queued job's delayTime grows, a finished job's answer changes with it", async () => {
    const id = (await e.post("/v2/work/run", { input: { fail: "boom", sleepMs: 10 } })).body.id;
    const text = async () => {
      const res = await e.app.request(`http://minipod.test/v2/work/status/${id}`, { headers: { authorization: "Bearer k" } });
      expect(res.headers.get("content-type")).toBe("application/json");
      return res.text();
    };
    const queued = await text();
    await e.advance(500);
    expect(JSON.parse(await text())).toMatchObject({ status: "IN_QUEUE", delayTime: JSON.parse(queued).delayTime + 500 });
    await e.advance(2010);
    const failed = await text();
    expect(JSON.parse(failed)).toMatchObject({ status: "FAILED", error: "boom", delayTime: 2000, executionTime: 10 });
    expect(await text()).toBe(failed);
    await e.post(`/v2/work/retry/${id}`);
    expect(JSON.parse(await text())).toMatchObject({ status: "IN_PROGRESS", retries: 1 });
    await e.advance(10);
    expect(JSON.parse(await text())).toMatchObject({ status: "FAILED", retries: 1, executionTime: 10 });
  });

  it("answers GET /status and /health in the turn the request arrives, journal and all", async () => {
    const id = (await e.post("/v2/echo/run", { input: { n: 1 } })).body.id;
    await e.advance(1000);
    const get = (path: string) => e.app.fetch(new Request(`http://minipod.test${path}`, { headers: { authorization: "Bearer k" } }));
    for (const path of [`/v2/echo/status/${id}`, "/v2/echo/health"]) {
      const res = get(path);
      expect(res, path).toBeInstanceOf(Response);
      expect((res as Response).status).toBe(200);
    }
    expect((await e.get(`/_emulator/requests?operation=status`)).body.requests).toContainEqual(expect.objectContaining({ path: `/v2/echo/status/${id}`, status: 200 }));
    // An unknown job is answered at once too.
    expect(get(`/v2/echo/status/nope`)).toBeInstanceOf(Response);
    expect(((await (get("/v2/echo/status/nope") as Response).json()) as { status: number }).status).toBe(404);
  });

  it("answers /runsync with a sync- id and the output", async () => {
    const res = await e.post("/v2/echo/runsync", { input: { n: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.id).toMatch(/^sync-[A-Za-z0-9_-]+$/);
    expect(res.body).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
  });

  it("holds /runsync on the virtual clock and answers with the current status when the wait ends", async () => {
    const pending = e.post("/v2/work/runsync?wait=5000", { input: { sleepMs: 60_000 } });
    let answered = false;
    void pending.then(() => (answered = true));
    await e.advance(4999);
    expect(answered).toBe(false);
    await e.advance(1);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "IN_PROGRESS", delayTime: 2000 });
  });

  it("refuses bad input with 400 problem+json naming each field", async () => {
    const res = await e.post("/v2/echo/run", { input: [1], policy: { ttl: "x", executionTimeout: 10 } });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.errors).toEqual(
      expect.arrayContaining(["$.input: expected object", "$.policy.ttl: expected integer", "$.policy.executionTimeout: expected number >= 5000"]),
    );
    const missing = await e.post("/v2/echo/run", {});
    expect(missing.body.errors).toEqual(["$: expected required property input to be present"]);
    const broken = await e.request("POST", "/v2/echo/run", "{not json");
    expect(broken.status).toBe(400);
    expect(broken.body.detail).toMatch(/not valid JSON/);
  });

  it("answers 404 problem+json for unknown endpoints, jobs and routes", async () => {
    for (const path of ["/v2/nope/health", "/v2/echo/status/unknown-id", "/v2/echo/nothing-here"]) {
      const res = await e.get(path);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ title: "Not Found", status: 404, detail: expect.any(String) });
    }
  });
});
