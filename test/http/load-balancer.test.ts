import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let emu: InProcess | undefined;
afterEach(() => {
  emu?.close();
  emu = undefined;
});

/** A worker's app, as a developer writes it with Hono: its fetch is the endpoint's handler. */
function workerApp() {
  const app = new Hono();
  const hanging: Array<() => void> = [];
  app.get("/hello", (c) => c.json({ hello: c.req.query("name") ?? "world" }));
  app.post("/echo", async (c) => c.json({ got: await c.req.json() }, 201));
  // Answers only when the test says so.
  app.get("/hang", () => new Promise<Response>((resolve) => hanging.push(() => resolve(new Response("done")))));
  return { app, finish: () => hanging.splice(0).forEach((f) => f()) };
}

type EndpointInput = { id: string; type: "LOAD_BALANCER"; handler: unknown; workersMin?: number; workersMax?: number; coldStartMs?: number; requestCount?: number; idleTimeout?: number };

async function boot(endpoint: Partial<EndpointInput> = {}) {
  const worker = workerApp();
  emu = await inProcess({ config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: worker.app.fetch, workersMin: 0, workersMax: 2, coldStartMs: 1000, ...endpoint } as never] } });
  return { emu, ...worker };
}

const body = (r: { body: unknown }) => r.body as Record<string, unknown>;

describe("load-balancing endpoints: an in-process fetch handler", () => {
  it("holds a request through the cold start, then answers it with the worker named", async () => {
    const { emu } = await boot();
    let answered = false;
    const pending = emu.get("/lb/api/hello?name=lb").then((r) => ((answered = true), r));
    await emu.advance(999);
    expect(answered).toBe(false);
    await emu.advance(1);
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ hello: "lb" });
    const workerId = r.headers.get("x-runpod-worker-id");
    expect(workerId).toMatch(/^[a-z0-9]+$/);
    // The worker is warm now: the next request is answered at once, by it.
    const again = await emu.post("/lb/api/echo", { x: 1 });
    expect(again.status).toBe(201);
    expect(again.body).toEqual({ got: { x: 1 } });
    expect(again.headers.get("x-runpod-worker-id")).toBe(workerId);
  });

  it("answers 400 no workers available after 2 minutes without a worker", async () => {
    const { emu } = await boot({ workersMax: 0 });
    let status = 0;
    const pending = emu.get("/lb/api/hello").then((r) => ((status = r.status), r));
    await emu.advance(119_999);
    expect(status).toBe(0);
    await emu.advance(1);
    const r = await pending;
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: "no workers available" });
  });

  it("waits when every worker is at its request count, and answers 400 when none frees up", async () => {
    const { emu, finish } = await boot({ workersMax: 1, requestCount: 1, coldStartMs: 0 });
    const first = emu.get("/lb/api/hang");
    await emu.advance(10);
    const second = emu.get("/lb/api/hello");
    await emu.advance(120_000);
    expect((await second).body).toEqual({ error: "no workers available" });
    finish();
    expect((await first).status).toBe(200);
  });

  it("cuts a request processed longer than 5.5 minutes with 524", async () => {
    const { emu } = await boot({ coldStartMs: 0 });
    let status = 0;
    const pending = emu.get("/lb/api/hang").then((r) => ((status = r.status), r));
    await emu.advance(329_999);
    expect(status).toBe(0);
    await emu.advance(1);
    const r = await pending;
    expect(r.status).toBe(524);
    expect(body(r).error).toMatch(/5\.5 minutes/);
    expect(r.headers.get("x-runpod-worker-id")).toBeTruthy();
  });

  it("refuses a body above 30 MB with 413, before any worker is asked", async () => {
    const { emu } = await boot({ coldStartMs: 0 });
    const r = await emu.request("POST", "/lb/api/echo", "x".repeat(30 * 1024 * 1024 + 1), { "content-type": "text/plain" });
    expect(r.status).toBe(413);
    expect(body(r).error).toMatch(/30 MB/);
    expect(emu.core.loadBalancers.status("api")!.requests.served).toBe(0);
  });

  it("scales on requests in flight, up to workersMax, and back down after idleTimeout", async () => {
    const { emu, finish } = await boot({ workersMin: 0, workersMax: 3, requestCount: 1, coldStartMs: 500, idleTimeout: 5 });
    const lb = emu.core.loadBalancers;
    const pending = [emu.get("/lb/api/hang"), emu.get("/lb/api/hang"), emu.get("/lb/api/hang"), emu.get("/lb/api/hang")];
    await emu.advance(0);
    expect(lb.status("api")!.workers).toMatchObject({ initializing: 3 });
    await emu.advance(500);
    expect(lb.status("api")).toMatchObject({ workers: { ready: 3, running: 3 }, requests: { inFlight: 3, waiting: 1 } });
    finish();
    await emu.advance(0);
    finish();
    const answers = await Promise.all(pending);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.headers.get("x-runpod-worker-id"))).size).toBe(3);
    await emu.advance(5_000);
    expect(lb.workers("api")).toHaveLength(0);
  });
});

describe("load-balancing endpoints: worker affinity (X-Runpod-Worker-Id)", () => {
  it("soft: prefers the worker, falls back to another when it is busy", async () => {
    const { emu, finish } = await boot({ workersMin: 2, workersMax: 2, requestCount: 1, coldStartMs: 0 });
    const [a, b] = emu.core.loadBalancers.workers("api").map((w) => w.id);
    const r = await emu.get("/lb/api/hello", { "x-runpod-worker-id": b! });
    expect(r.headers.get("x-runpod-worker-id")).toBe(b);
    const busy = emu.get("/lb/api/hang", { "x-runpod-worker-id": b! });
    await emu.advance(0);
    const fallback = await emu.get("/lb/api/hello", { "x-runpod-worker-id": b! });
    expect(fallback.headers.get("x-runpod-worker-id")).toBe(a);
    finish();
    await busy;
  });

  it("strict: waits for its worker; 400 timed out waiting for worker after 5 minutes; 404 affinity_worker_gone for an unknown one", async () => {
    const { emu, finish } = await boot({ workersMin: 2, workersMax: 2, requestCount: 1, coldStartMs: 0 });
    const [, b] = emu.core.loadBalancers.workers("api").map((w) => w.id);
    const gone = await emu.get("/lb/api/hello", { "x-runpod-worker-id": "strict nosuchworker" });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: "affinity_worker_gone" });
    const busy = emu.get("/lb/api/hang", { "x-runpod-worker-id": `strict ${b}` });
    await emu.advance(0);
    let waited: number | undefined;
    const pinned = emu.get("/lb/api/hello", { "x-runpod-worker-id": `strict ${b}` }).then((r) => ((waited = r.status), r));
    await emu.advance(299_999);
    expect(waited).toBeUndefined();
    await emu.advance(1);
    expect((await pinned).body).toEqual({ error: "timed out waiting for worker" });
    expect((await pinned).status).toBe(400);
    finish();
    expect((await busy).headers.get("x-runpod-worker-id")).toBe(b);
  });

  it("strict-resume: brings a scaled-down worker back by its id, where strict answers 404", async () => {
    const { emu } = await boot({ workersMin: 0, workersMax: 2, coldStartMs: 1000, idleTimeout: 5 });
    const first = emu.get("/lb/api/hello");
    await emu.advance(1000);
    const id = (await first).headers.get("x-runpod-worker-id")!;
    await emu.advance(5_000);
    expect(emu.core.loadBalancers.workers("api")).toHaveLength(0);
    expect((await emu.get("/lb/api/hello", { "x-runpod-worker-id": `strict ${id}` })).status).toBe(404);
    const resumed = emu.get("/lb/api/hello", { "x-runpod-worker-id": `strict-resume ${id}` });
    await emu.advance(1000);
    const r = await resumed;
    expect(r.status).toBe(200);
    expect(r.headers.get("x-runpod-worker-id")).toBe(id);
  });
});

describe("load-balancing endpoints on the REST surface", () => {
  it("v2 creates a LOAD_BALANCER endpoint with base and health URLs that reach it (the echo handler by default)", async () => {
    emu = await inProcess();
    const created = await emu.post("/v2/serverless", {
      name: "lb",
      type: "LOAD_BALANCER",
      image: "me/worker:1",
      scaling: { type: "REQUEST_COUNT", requestCount: 2 },
      gpu: { pools: ["ADA_24"] },
      workers: { min: 1, max: 2 },
    });
    expect(created.status).toBe(201);
    const id = body(created).id as string;
    expect(created.body).toMatchObject({
      type: "LOAD_BALANCER",
      scaling: { type: "REQUEST_COUNT", requestCount: 2 },
      requestUrls: { base: `http://minipod.test/lb/${id}`, health: `http://minipod.test/lb/${id}/ping` },
    });
    expect((await emu.get(`/v2/serverless/${id}`)).body).toMatchObject({ type: "LOAD_BALANCER" });
    expect((await emu.get(`/v1/endpoints/${id}`)).body).toMatchObject({ type: "LOAD_BALANCER", scalerType: "REQUEST_COUNT", scalerValue: 2 });
    await emu.advance(1000);
    const r = await emu.post(`/lb/${id}/generate?x=1`, { prompt: "hi" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ method: "POST", path: "/generate", query: { x: "1" }, body: { prompt: "hi" } });
    // Its queue operations do not exist.
    expect((await emu.post(`/v2/${id}/run`, { input: {} })).status).toBe(404);
  });

  it("v2 refuses a LOAD_BALANCER endpoint scaling on QUEUE_DELAY; v1 creates one from a template", async () => {
    emu = await inProcess({ config: { templates: [{ id: "t", name: "t" }] } });
    const refused = await emu.post("/v2/serverless", { name: "lb", type: "LOAD_BALANCER", image: "me/worker:1", scaling: { type: "QUEUE_DELAY", queueDelay: 4 }, gpu: { pools: ["ADA_24"] } });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/REQUEST_COUNT/);
    const v1 = await emu.post("/v1/endpoints", { name: "lb1", templateId: "t", type: "LOAD_BALANCER" });
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({ type: "LOAD_BALANCER", scalerType: "REQUEST_COUNT" });
    const v2 = await emu.get(`/v2/serverless/${body(v1).id}`);
    expect(v2.body).toMatchObject({ type: "LOAD_BALANCER", requestUrls: { base: `http://minipod.test/lb/${body(v1).id}` } });
    expect((await emu.request("PATCH", `/v1/endpoints/${body(v1).id}`, { type: "QUEUE" })).status).toBe(400);
  });

  it("refuses the queue-only scripted handler on a load-balancing endpoint in the config, saying what it takes", async () => {
    await expect(inProcess({ config: { endpoints: [{ id: "lb", type: "LOAD_BALANCER", handler: "scripted" }] } })).rejects.toThrow(/scripted handler answers queue jobs/);
  });

  it("answers 404 naming the load-balancing endpoints for an unknown one", async () => {
    await boot();
    const r = await emu!.get("/lb/nope/x");
    expect(r.status).toBe(404);
    expect(body(r).detail).toMatch(/"api"/);
  });
});

describe("load-balancing endpoints: the built-in openai handler", () => {
  it("answers OpenAI routes directly, plain and streamed", async () => {
    emu = await inProcess({ config: { endpoints: [{ id: "llm", type: "LOAD_BALANCER", handler: "openai", workersMin: 1, coldStartMs: 0, openai: { tokenDelayMs: 0, models: ["m"] } } as never] } });
    const chat = await emu.post("/lb/llm/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }] });
    expect(chat.status).toBe(200);
    expect(chat.body).toMatchObject({ object: "chat.completion", model: "m" });
    const models = await emu.get("/lb/llm/v1/models");
    expect(body(models).data).toEqual([expect.objectContaining({ id: "m" })]);
    const streamed = await emu.post("/lb/llm/v1/chat/completions", { model: "m", stream: true, messages: [{ role: "user", content: "hi" }] });
    expect(streamed.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(streamed.text).toMatch(/chat\.completion\.chunk/);
    expect(streamed.text.trim().endsWith("data: [DONE]")).toBe(true);
  });
});

describe("load-balancing endpoints and the control surface", () => {
  it("injected faults, the journal and /_emulator/load-balancers cover them", async () => {
    const { emu } = await boot({ coldStartMs: 0, workersMin: 1 });
    await emu.advance(0);
    await emu.post("/_emulator/faults", { endpoint: "api", fault: { type: "http", status: 503, message: "worker pool down" }, times: 1 });
    const faulted = await emu.get("/lb/api/hello");
    expect(faulted.status).toBe(503);
    expect(emu.core.loadBalancers.status("api")!.requests.served).toBe(0);
    expect((await emu.get("/lb/api/hello")).status).toBe(200);
    const journal = await emu.get("/_emulator/requests?endpoint=api");
    expect(journal.body.requests.map((r: { path: string; operation: string; status: number }) => [r.path, r.operation, r.status])).toEqual([
      ["/lb/api/hello", "lb", 503],
      ["/lb/api/hello", "lb", 200],
    ]);
    const listed = await emu.get("/_emulator/load-balancers");
    expect(listed.body.endpoints).toEqual([
      expect.objectContaining({
        id: "api",
        status: expect.objectContaining({ workers: expect.objectContaining({ ready: 1 }), requests: { inFlight: 0, waiting: 0, served: 1 } }),
        workers: [expect.objectContaining({ kind: "simulated", state: "ready", served: 1 })],
      }),
    ]);
    // /health in the queue's shape: workers by state, requests answered, in flight, waiting.
    expect((await emu.get("/v2/api/health")).body).toEqual({
      jobs: { completed: 1, failed: 0, inProgress: 0, inQueue: 0, retried: 0 },
      workers: { idle: 1, initializing: 0, ready: 1, running: 0, throttled: 0, unhealthy: 0 },
    });
    // The dashboard's endpoints panel shows it, its worker and its requests.
    const panel = await emu.get("/_dashboard/panels/endpoints");
    expect(panel.text).toMatch(/data-endpoint="api" data-type="LOAD_BALANCER"/);
    expect(panel.text).toMatch(/data-count="served">1</);
    expect(panel.text).toMatch(/class="worker w-idle"/);
    // A worker process cannot join an endpoint served in process.
    expect((await emu.post("/_emulator/load-balancers/api/workers", { workerId: "w1", port: 9 })).status).toBe(404);
  });

  it("a worker-crash fault fells the worker a request reaches (502), and the pool starts another", async () => {
    const { emu } = await boot({ coldStartMs: 0, workersMin: 1 });
    await emu.advance(0);
    const [first] = emu.core.loadBalancers.workers("api").map((w) => w.id);
    await emu.post("/_emulator/faults", { endpoint: "api", fault: { type: "worker-crash" }, times: 1 });
    const crashed = await emu.get("/lb/api/hello");
    expect(crashed.status).toBe(502);
    expect(crashed.headers.get("x-runpod-worker-id")).toBe(first);
    expect(body(crashed).error).toMatch(/crashed/);
    const next = await emu.get("/lb/api/hello");
    expect(next.status).toBe(200);
    expect(next.headers.get("x-runpod-worker-id")).not.toBe(first);
  });

  it("a reset and a snapshot restore bring back the configured endpoint and forget the ones made since", async () => {
    const { emu } = await boot({ coldStartMs: 0, workersMin: 1 });
    await emu.post("/_emulator/snapshots/start");
    const made = await emu.post("/v2/serverless", { name: "later", type: "LOAD_BALANCER", image: "me/x:1", scaling: { type: "REQUEST_COUNT", requestCount: 1 }, gpu: { pools: ["ADA_24"] } });
    const id = body(made).id as string;
    expect(emu.core.endpoints.has(id, "LOAD_BALANCER")).toBe(true);
    await emu.post("/_emulator/snapshots/start/restore");
    expect((await emu.get(`/lb/${id}/x`)).status).toBe(404);
    await emu.advance(0);
    expect((await emu.get("/lb/api/hello")).status).toBe(200);
    await emu.post("/v2/serverless", { name: "later", type: "LOAD_BALANCER", image: "me/x:1", scaling: { type: "REQUEST_COUNT", requestCount: 1 }, gpu: { pools: ["ADA_24"] } });
    await emu.post("/_emulator/reset");
    expect(emu.core.endpoints.specs("LOAD_BALANCER").map((s) => s.id)).toEqual(["api"]);
    await emu.advance(0);
    expect((await emu.get("/lb/api/hello")).status).toBe(200);
  });
});
