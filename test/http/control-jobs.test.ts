import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

const config = {
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 1000, idleTimeout: 30 },
    { id: "work", name: "Slow work", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 2000, idleTimeout: 5, executionTimeoutMs: 60_000 },
  ],
};

describe("GET /_emulator/endpoints", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("shows each endpoint's settings, its workers through their lives and its queue depth", async () => {
    const initial = await e.get("/_emulator/endpoints");
    expect(initial.status).toBe(200);
    const [echo, work] = initial.body.endpoints;
    expect(echo).toMatchObject({ id: "echo", name: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 1000, idleTimeout: 30, throttled: false });
    expect(echo.workers).toEqual([{ id: expect.stringMatching(/^[a-z0-9]{14}$/), state: "idle", since: e.now() }]);
    expect(work).toMatchObject({ id: "work", name: "Slow work", handler: "scripted", executionTimeoutMs: 60_000, workers: [] });
    expect(work.jobs).toEqual({ IN_QUEUE: 0, IN_PROGRESS: 0, COMPLETED: 0, FAILED: 0, CANCELLED: 0, TIMED_OUT: 0 });

    const a = await e.post("/v2/work/run", { input: { sleepMs: 10_000 } });
    await e.post("/v2/work/run", { input: {} });
    let now = (await e.get("/_emulator/endpoints")).body.endpoints[1];
    expect(now.jobs.IN_QUEUE).toBe(2);
    expect(now.workers).toEqual([expect.objectContaining({ state: "initializing" })]);

    await e.advance(2000);
    now = (await e.get("/_emulator/endpoints")).body.endpoints[1];
    expect(now.jobs).toMatchObject({ IN_QUEUE: 1, IN_PROGRESS: 1 });
    expect(now.workers).toEqual([{ id: expect.any(String), state: "running", jobId: a.body.id, since: e.now() }]);

    await e.advance(10_000);
    now = (await e.get("/_emulator/endpoints")).body.endpoints[1];
    expect(now.jobs).toMatchObject({ IN_QUEUE: 0, IN_PROGRESS: 0, COMPLETED: 2 });
    expect(now.workers).toEqual([expect.objectContaining({ state: "idle" })]);
  });
});

describe("GET /_emulator/jobs", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  const submitSpaced = async (specs: Array<[string, object]>) => {
    const ids: string[] = [];
    for (const [endpoint, input] of specs) {
      ids.push((await e.post(`/v2/${endpoint}/run`, { input })).body.id);
      await e.advance(10);
    }
    return ids;
  };

  it("lists jobs newest first without payloads, with the number that match", async () => {
    const [first, second, third] = await submitSpaced([
      ["echo", { n: 1 }],
      ["work", { sleepMs: 60_000 }],
      ["echo", { n: 3 }],
    ]);
    const res = await e.get("/_emulator/jobs");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: 3, limit: 50, offset: 0 });
    expect(res.body.jobs.map((j: { id: string }) => j.id)).toEqual([third, second, first]);
    expect(res.body.jobs[0]).toEqual({
      id: third,
      endpointId: "echo",
      kind: "run",
      status: "COMPLETED",
      createdAt: expect.any(Number),
      queuedAt: expect.any(Number),
      startedAt: expect.any(Number),
      completedAt: expect.any(Number),
      workerId: expect.any(String),
      retries: 0,
      attempt: 1,
      delayTime: 0,
      executionTime: 0,
    });
    // queued since its submission, two 10 ms steps ago
    expect(res.body.jobs[1]).toMatchObject({ id: second, status: "IN_QUEUE", delayTime: 20 });
    expect(res.text).not.toContain("sleepMs");
  });

  it("filters by endpoint and status and pages with limit and offset", async () => {
    const ids = await submitSpaced([
      ["echo", { n: 1 }],
      ["echo", { n: 2 }],
      ["work", { sleepMs: 60_000 }],
      ["echo", { n: 4 }],
    ]);
    const echo = await e.get("/_emulator/jobs?endpoint=echo");
    expect(echo.body.count).toBe(3);
    expect(echo.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[3], ids[1], ids[0]]);
    const queued = await e.get("/_emulator/jobs?status=IN_QUEUE");
    expect(queued.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[2]]);
    const page = await e.get("/_emulator/jobs?endpoint=echo&limit=1&offset=1");
    expect(page.body).toMatchObject({ count: 3, limit: 1, offset: 1 });
    expect(page.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[1]]);
    const none = await e.get("/_emulator/jobs?endpoint=nope");
    expect(none.body).toMatchObject({ jobs: [], count: 0 });
  });

  it("finds jobs by any part of their id: its end, its start, the whole id", async () => {
    const ids = await submitSpaced([
      ["echo", { n: 1 }],
      ["echo", { n: 2 }],
      ["work", { n: 3 }],
    ]);
    const listed = async (q: string) => ((await e.get(`/_emulator/jobs?${q}`)).body.jobs as Array<{ id: string }>).map((j) => j.id);
    expect(await listed(`id=${ids[1]!.slice(-11, -3)}`)).toEqual([ids[1]]);
    expect(await listed(`id=${ids[2]}`)).toEqual([ids[2]]);
    expect(await listed(`id=${ids[0]!.slice(0, 4)}`)).toEqual([ids[2], ids[1], ids[0]]);
    expect(await listed(`id=${ids[0]!.slice(-11, -3)}&endpoint=work`)).toEqual([]);
    expect((await e.get("/_emulator/jobs?id=zz-nothing")).body).toMatchObject({ jobs: [], count: 0 });
    const tooLong = await e.get(`/_emulator/jobs?id=${"a".repeat(201)}`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.errors).toEqual([expect.stringMatching(/^query\.id: /)]);
  });

  it("refuses bad filters with 400 naming each", async () => {
    const res = await e.get("/_emulator/jobs?status=DONE&limit=0&offset=x");
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([expect.stringMatching(/^query\.status: expected value to be one of/), "query.limit: expected number >= 1", "query.offset: expected integer"]),
    );
    expect((await e.get("/_emulator/jobs?limit=501")).status).toBe(400);
  });
});

describe("GET /_emulator/jobs/{id}", () => {
  let e: InProcess;
  beforeEach(async () => {
    e = await inProcess({ config });
  });
  afterEach(() => e.close());

  it("gives input, output, stream chunks, times and worker, never the S3 secret", async () => {
    const s3Config = { accessId: "AKIA-ID", accessSecret: "very-secret-value", bucketName: "bucket", endpointUrl: "http://127.0.0.1:9000" };
    const run = await e.post("/v2/work/run", { input: { stream: ["a", "b"], streamIntervalMs: 1000, output: { done: true } }, s3Config, webhook: "http://127.0.0.1:1/hook" });
    await e.advance(3000);
    const res = await e.get(`/_emulator/jobs/${run.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: run.body.id,
      endpointId: "work",
      status: "COMPLETED",
      input: { stream: ["a", "b"], streamIntervalMs: 1000, output: { done: true } },
      output: { done: true },
      webhook: "http://127.0.0.1:1/hook",
      s3Config: { accessId: "AKIA-ID", bucketName: "bucket", endpointUrl: "http://127.0.0.1:9000" },
      policy: { executionTimeout: 60_000, ttl: 86_400_000, lowPriority: false },
      stream: [{ output: "a" }, { output: "b" }],
      streamCount: 2,
      delayTime: 2000,
      executionTime: 1000,
      workerId: expect.any(String),
      retainUntil: expect.any(Number),
    });
    expect(res.text).not.toContain("very-secret-value");
    expect(res.body.s3Config).not.toHaveProperty("accessSecret");
  });

  it("shows a failed job's error", async () => {
    const run = await e.post("/v2/work/run", { input: { fail: "model exploded" } });
    await e.advance(2000);
    const res = await e.get(`/_emulator/jobs/${run.body.id}`);
    expect(res.body).toMatchObject({ status: "FAILED", error: "model exploded" });
    expect(res.body).not.toHaveProperty("output");
  });

  it("answers 404 problem+json for an unknown job", async () => {
    const res = await e.get("/_emulator/jobs/no-such-job");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.detail).toContain('"no-such-job"');
  });
});
