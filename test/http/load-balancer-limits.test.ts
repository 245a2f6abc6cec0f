import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let emu: InProcess | undefined;
afterEach(() => {
  emu?.close();
  emu = undefined;
});

/** 3 s into a 10 s window of the virtual clock. */
const START = Date.UTC(2026, 2, 4, 5, 29, 43);

/** A worker's Hono app: `/hang` answers only when the test says so; counts what reached it. */
function workerApp() {
  const app = new Hono();
  const hanging: Array<() => void> = [];
  let hits = 0;
  app.get("/hello", (c) => ((hits++), c.json({ hello: "world" })));
  // A worker with limits of its own: its headers reach the client as it sent them.
  app.get("/own", (c) => c.json({}, 200, { ratelimit: '"worker";r=1;t=1' }));
  app.get("/hang", () => ((hits++), new Promise<Response>((resolve) => hanging.push(() => resolve(new Response("done"))))));
  return { app, hits: () => hits, finish: () => hanging.splice(0).forEach((f) => f()) };
}

async function boot(loadBalancer: { requests?: number; concurrent?: number }) {
  const worker = workerApp();
  emu = await inProcess({
    clock: { mode: "manual", start: START },
    config: {
      rateLimits: { loadBalancer, queue: { requestsPerWorker: 0 } },
      endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: worker.app.fetch as never, workersMin: 1, workersMax: 1, coldStartMs: 0, requestCount: 10 }],
    },
  });
  await emu.advance(0);
  return { emu, ...worker };
}

describe("rate limits of load-balancing endpoints (rateLimits.loadBalancer)", () => {
  it("allows its requests per 10 s window, saying what is left, then answers 429 with Retry-After before any worker is asked", async () => {
    const { emu, hits } = await boot({ requests: 3 });
    for (const left of [2, 1, 0]) {
      const r = await emu.get("/lb/api/hello");
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ hello: "world" });
      expect(r.headers.get("ratelimit")).toBe(`"lb";r=${left};t=7`);
      expect(r.headers.get("ratelimit-policy")).toBe('"lb";q=3;w=10');
    }
    const limited = await emu.get("/lb/api/hello");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("content-type")).toBe("application/problem+json");
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(limited.headers.get("ratelimit")).toBe('"lb";r=0;t=7');
    expect(limited.body.detail).toMatch(/rate limit exceeded for requests to load-balancing endpoint "api": 3 requests per 10 s; retry in 7 s/);
    expect(hits()).toBe(3);
    // Any method counts; the next window starts afresh. A worker's own RateLimit is left as it sent it.
    expect((await emu.post("/lb/api/hello")).status).toBe(429);
    await emu.advance(7000);
    const again = await emu.get("/lb/api/hello");
    expect(again.status).toBe(200);
    expect(again.headers.get("ratelimit")).toBe('"lb";r=2;t=10');
    const own = await emu.get("/lb/api/own");
    expect(own.headers.get("ratelimit")).toBe('"worker";r=1;t=1');
    expect(own.headers.get("ratelimit-policy")).toBe('"lb";q=3;w=10');
    // The journal records the refusals as requests of the endpoint.
    const journal = await emu.get("/_emulator/requests?endpoint=api&status=429");
    expect(journal.body.requests.map((r: { operation: string }) => r.operation)).toEqual(["lb", "lb"]);
  });

  it("limits requests at once, those waiting included, and frees a slot when an answer ends", async () => {
    const { emu, finish } = await boot({ concurrent: 2 });
    const held = [emu.get("/lb/api/hang"), emu.get("/lb/api/hang")];
    const busy = await emu.get("/lb/api/hello");
    expect(busy.status).toBe(429);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(busy.body.detail).toMatch(/concurrency limit exceeded for requests to load-balancing endpoint "api": 2 requests at once/);
    finish();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
    expect((await emu.get("/lb/api/hello")).status).toBe(200);
  });

  it("counts per endpoint, and rateLimits.enabled: false turns it off with its headers", async () => {
    const worker = workerApp();
    emu = await inProcess({
      clock: { mode: "manual", start: START },
      config: { rateLimits: { enabled: false, loadBalancer: { requests: 1 } }, endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: worker.app.fetch as never, workersMin: 1, coldStartMs: 0 }] },
    });
    await emu.advance(0);
    for (let i = 0; i < 3; i++) {
      const r = await emu.get("/lb/api/hello");
      expect(r.status).toBe(200);
      expect(r.headers.get("ratelimit")).toBeNull();
    }
  });

  it("a fault rule on operation lb answers 429 as the limit would, through the control API", async () => {
    const { emu, hits } = await boot({});
    const rule = await emu.post("/_emulator/faults", { endpoint: "api", operation: "lb", fault: { type: "http", status: 429, retryAfter: 3 }, times: 1 });
    expect(rule.status).toBe(200);
    const forced = await emu.get("/lb/api/hello");
    expect(forced.status).toBe(429);
    expect(forced.headers.get("retry-after")).toBe("3");
    expect(hits()).toBe(0);
    expect((await emu.get("/lb/api/hello")).status).toBe(200);
    // An operation the endpoints do not have is refused, naming the nearest.
    expect((await emu.post("/_emulator/faults", { endpoint: "api", operation: "lbb", fault: { type: "http", status: 429 } })).body.detail).toMatch(/did you mean "lb"/);
  });

  it("refuses a limit of 0 in the config, naming the field", async () => {
    await expect(inProcess({ config: { rateLimits: { loadBalancer: { requests: 0 } }, endpoints: [] } })).rejects.toThrow(/rateLimits\.loadBalancer\.requests/);
  });
});
