import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { FakeWall } from "../support/fake-wall.js";
import { inProcess, type InProcess } from "../support/in-process.js";

let e: InProcess;
afterEach(() => e?.close());

const start = (endpoint: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  inProcess({ config: { endpoints: [{ id: "ep", handler: "scripted", workersMin: 1, workersMax: 2, coldStartMs: 1000, ...endpoint }], ...extra } }).then((x) => (e = x));

describe("fault rules", () => {
  it("hold at most 1,000 that may still fire: the next is refused with 409 naming the limit, and spent ones make room", async () => {
    await start();
    for (let i = 0; i < 999; i++) e.core.faults.add({ operation: "health", fault: { type: "latency", ms: 1 } });
    const last = await e.post("/_emulator/faults", { endpoint: "ep", operation: "run", fault: { type: "http", status: 503 }, times: 1 });
    expect(last.status).toBe(200);
    const refused = await e.post("/_emulator/faults", { operation: "status", fault: { type: "http", status: 500 } });
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.body).toMatchObject({ status: 409, detail: expect.stringMatching(/already 1000 live fault rules, the most minipod holds/) });
    expect(e.core.faults.list()).toHaveLength(1000);
    // The rule fires once and is spent: room for one more; spent rules stay listed.
    expect((await e.post("/v2/ep/run", { input: {} })).status).toBe(503);
    expect((await e.post("/_emulator/faults", { operation: "status", fault: { type: "http", status: 500 } })).status).toBe(200);
    expect(e.core.faults.list()).toHaveLength(1001);
    expect((await e.request("DELETE", "/_emulator/faults")).body).toEqual({ removed: 1001 });
  });

  it("keep the newest 1,000 spent rules listed", async () => {
    await start();
    for (let i = 0; i < 1200; i++) {
      e.core.faults.add({ endpoint: "ep", operation: "health", fault: { type: "http", status: 503 }, times: 1 });
      expect((await e.get("/v2/ep/health")).status).toBe(503);
    }
    const listed = e.core.faults.list();
    expect(listed.length).toBeLessThanOrEqual(1001);
    expect(listed.every((r) => r.spent)).toBe(true);
    expect(listed.at(-1)!.id).toBe("fault-1200");
  });

  it("of the config are at most 1,000", async () => {
    const rules = Array.from({ length: 1001 }, () => ({ operation: "health" as const, fault: { type: "latency" as const, ms: 1 } }));
    await expect(createEmulator({ config: { faults: rules } })).rejects.toThrow(/faults: .*1000/);
  });
});

describe("request faults", () => {
  it("answers an injected status as problem+json with Retry-After, then lets requests through", async () => {
    await start();
    const added = await e.post("/_emulator/faults", { endpoint: "ep", operation: "run", fault: { type: "http", status: 429, retryAfter: 3 }, times: 1 });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ id: "fault-1", fired: 0, spent: false });
    const hit = await e.post("/v2/ep/run", { input: {} });
    expect(hit.status).toBe(429);
    expect(hit.headers.get("retry-after")).toBe("3");
    expect(hit.headers.get("content-type")).toContain("application/problem+json");
    expect(hit.body).toMatchObject({ title: "Too Many Requests", status: 429 });
    expect((await e.post("/v2/ep/run", { input: {} })).status).toBe(200);
    expect((await e.get("/_emulator/faults")).body.faults[0]).toMatchObject({ fired: 1, spent: true });
  });

  it("only matches its operation and endpoint, and can be removed", async () => {
    await start();
    const { id } = (await e.post("/_emulator/faults", { operation: "health", fault: { type: "http", status: 503 } })).body;
    expect((await e.get("/v2/ep/health")).status).toBe(503);
    expect((await e.post("/v2/ep/run", { input: {} })).status).toBe(200);
    expect((await e.request("DELETE", `/_emulator/faults/${id}`)).body).toEqual({ removed: 1 });
    expect((await e.get("/v2/ep/health")).status).toBe(200);
    expect((await e.request("DELETE", `/_emulator/faults/${id}`)).status).toBe(404);
  });

  it("logs every fired fault", async () => {
    const lines: string[] = [];
    e = await inProcess({ config: { endpoints: [{ id: "ep", workersMin: 1 }] }, log: (l) => lines.push(l), logLevel: "info" });
    await e.post("/_emulator/faults", { operation: "health", fault: { type: "http", status: 502 }, times: 1 });
    await e.get("/v2/ep/health");
    expect(lines.some((l) => /warn .*fault fault-1 fired: HTTP 502 on GET \/v2\/ep\/health/.test(l))).toBe(true);
  });

  it("validates rules", async () => {
    await start();
    const bad = await e.post("/_emulator/faults", { fault: { type: "explode" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^\$\.fault/);
  });
});

describe("a latency fault", () => {
  const turns = async (n = 20) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it("delays the answer on the clock's wall time, and its timer ends with the emulator", async () => {
    const wall = new FakeWall();
    const e = await inProcess({ clock: { mode: "manual", wall }, config: { endpoints: [{ id: "ep", workersMin: 1 }] } });
    e.core.faults.add({ operation: "health", fault: { type: "latency", ms: 60_000 }, times: 2 });
    let status: number | undefined;
    void e.get("/v2/ep/health").then((r) => (status = r.status));
    await turns();
    expect(status).toBeUndefined();
    wall.advance(59_999);
    await turns();
    expect(status).toBeUndefined();
    wall.advance(1);
    await turns();
    expect(status).toBe(200);
    // A second delay under way when the emulator stops leaves no timer behind.
    void e.get("/v2/ep/health");
    await turns();
    expect(wall.pending).toBeGreaterThan(0);
    e.close();
    expect(wall.pending).toBe(0);
  });
});

describe("request faults over a real socket", () => {
  let emu: Emulator;
  afterEach(() => emu?.close());

  it("drops the connection on a reset fault and delays on a latency fault", async () => {
    emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "ep", workersMin: 1 }] } });
    emu.faults.add({ operation: "health", fault: { type: "reset" }, times: 1 });
    await expect(fetch(`${emu.url}/v2/ep/health`, { headers: { authorization: "k" } })).rejects.toThrow();
    expect((await fetch(`${emu.url}/v2/ep/health`, { headers: { authorization: "k" } })).status).toBe(200);
    expect(emu.requests({ operation: "health" }).requests.map((r) => r.status)).toEqual([0, 200]);

    emu.faults.add({ operation: "health", fault: { type: "latency", ms: 150 }, times: 1 });
    const t0 = performance.now();
    expect((await fetch(`${emu.url}/v2/ep/health`, { headers: { authorization: "k" } })).status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
  });
});

describe("job faults", () => {
  it("worker-crash: the worker dies mid-job, the job is re-queued and counted as retried", async () => {
    await start({ workersMin: 1, workersMax: 1, coldStartMs: 500 });
    await e.post("/_emulator/faults", { endpoint: "ep", fault: { type: "worker-crash", atMs: 1000 }, times: 1 });
    const { id } = (await e.post("/v2/ep/run", { input: { sleepMs: 3000, output: "ok" } })).body;
    await e.advance(0);
    const first = (await e.get(`/v2/ep/status/${id}`)).body.workerId;
    await e.advance(1000);
    expect(await e.get(`/v2/ep/health`).then((r) => r.body)).toMatchObject({ jobs: { inQueue: 1, retried: 1 }, workers: { initializing: 1 } });
    await e.advance(500 + 3000);
    const done = (await e.get(`/v2/ep/status/${id}`)).body;
    expect(done).toMatchObject({ status: "COMPLETED", output: "ok", retries: 1 });
    expect(done.workerId).not.toBe(first);
    const causes = (await e.get(`/_emulator/jobs/${id}/events`)).body.events.map((ev: { cause: string }) => ev.cause);
    expect(causes).toEqual([
      "submitted with /run",
      `started on worker ${first}`,
      expect.stringMatching(/^fault fault-1 fired: worker .* will crash 1000 ms into the job$/),
      expect.stringMatching(/^worker .* crashed \(fault fault-1\); re-queued$/),
      expect.stringMatching(/^started on worker /),
      "handler returned",
    ]);
  });

  it("worker-crash: a job whose worker crashes a 4th time fails, saying it had gone back to the queue 3 times", async () => {
    await start({ workersMin: 1, workersMax: 1, coldStartMs: 0 });
    await e.post("/_emulator/faults", { endpoint: "ep", fault: { type: "worker-crash", atMs: 100 } });
    const { id } = (await e.post("/v2/ep/run", { input: { sleepMs: 1000, output: "never" } })).body;
    for (let crash = 1; crash <= 3; crash++) {
      await e.advance(100);
      expect((await e.get(`/v2/ep/status/${id}`)).body, `after crash ${crash}`).toMatchObject({ status: "IN_PROGRESS", retries: crash });
    }
    await e.advance(100);
    const failed = (await e.get(`/v2/ep/status/${id}`)).body;
    expect(failed).toMatchObject({ status: "FAILED", retries: 3 });
    expect(failed.error).toMatch(/^worker \S+ crashed \(fault fault-1\); the job had already gone back to the queue 3 time\(s\), so it fails instead$/);
    const causes = (await e.get(`/_emulator/jobs/${id}/events`)).body.events.map((ev: { cause: string }) => ev.cause);
    expect(causes.filter((c: string) => / crashed /.test(c))).toEqual([
      ...Array(3).fill(expect.stringMatching(/; re-queued$/)),
      expect.stringMatching(/^worker \S+ crashed \(fault fault-1\); failed after 3 retries$/),
    ]);
    expect((await e.get("/v2/ep/health")).body).toMatchObject({ jobs: { failed: 1, inQueue: 0, inProgress: 0 } });
  });

  it("worker-crash without atMs loses the result the handler was about to report", async () => {
    await start({ workersMin: 1, workersMax: 1, coldStartMs: 0 });
    await e.post("/_emulator/faults", { fault: { type: "worker-crash" }, times: 1 });
    const { id } = (await e.post("/v2/ep/run", { input: { sleepMs: 100 } })).body;
    await e.advance(100);
    expect((await e.get(`/v2/ep/status/${id}`)).body).toMatchObject({ retries: 1, status: "IN_PROGRESS" });
    await e.advance(100);
    expect((await e.get(`/v2/ep/status/${id}`)).body).toMatchObject({ retries: 1, status: "COMPLETED" });
  });

  it("timeout: the job hangs until its execution timeout, then TIMED_OUT", async () => {
    await start();
    await e.post("/_emulator/faults", { endpoint: "ep", fault: { type: "timeout" }, times: 1 });
    const { id } = (await e.post("/v2/ep/run", { input: { output: "never" }, policy: { executionTimeout: 30_000 } })).body;
    await e.advance(29_999);
    expect((await e.get(`/v2/ep/status/${id}`)).body.status).toBe("IN_PROGRESS");
    await e.advance(1);
    expect((await e.get(`/v2/ep/status/${id}`)).body).toMatchObject({ status: "TIMED_OUT" });
  });

  it("no-workers: jobs wait in the queue with workers throttled until the rule goes", async () => {
    await start({ workersMin: 1, workersMax: 2 });
    const { id: ruleId } = (await e.post("/_emulator/faults", { endpoint: "ep", fault: { type: "no-workers" } })).body;
    const { id } = (await e.post("/v2/ep/run", { input: {} })).body;
    await e.advance(60_000);
    expect((await e.get("/v2/ep/health")).body).toMatchObject({ jobs: { inQueue: 1 }, workers: { idle: 0, running: 0, initializing: 0, throttled: 1 } });
    await e.request("DELETE", `/_emulator/faults/${ruleId}`);
    await e.advance(1000);
    expect((await e.get(`/v2/ep/status/${id}`)).body.status).toBe("COMPLETED");
    expect((await e.get("/v2/ep/health")).body.workers.throttled).toBe(0);
  });

  it("config faults[] are active from the start and again after a reset", async () => {
    await start({}, { faults: [{ operation: "health", fault: { type: "http", status: 500 }, times: 1 }] });
    expect((await e.get("/v2/ep/health")).status).toBe(500);
    expect((await e.get("/v2/ep/health")).status).toBe(200);
    await e.post("/_emulator/reset");
    expect((await e.get("/v2/ep/health")).status).toBe(500);
  });
});
