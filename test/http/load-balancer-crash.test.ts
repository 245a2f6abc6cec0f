import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../support/in-process.js";

let emu: InProcess | undefined;
afterEach(() => {
  emu?.close();
  emu = undefined;
});

/** A worker's Hono app: `/hang` never answers, `/stream` writes one chunk and then nothing. */
function workerApp() {
  const app = new Hono();
  app.get("/hello", (c) => c.json({ hello: "world" }));
  app.get("/hang", () => new Promise<Response>(() => {}));
  app.get("/stream", () => new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("data: 0\n\n")) }), { headers: { "content-type": "text/event-stream" } }));
  return app;
}

async function boot() {
  emu = await inProcess({ config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: workerApp().fetch as never, workersMin: 1, workersMax: 1, coldStartMs: 0 }] } });
  await emu.advance(0);
  const first = emu.core.loadBalancers.workers("api")[0]!.id;
  return { emu, first };
}

const crashAt = (atMs: number) => ({ endpoint: "api", fault: { type: "worker-crash", atMs }, times: 1 });

describe("a worker-crash fault's atMs on a load-balancing endpoint", () => {
  it("fells the worker atMs of virtual time into the request: 502, and the pool starts another", async () => {
    const { emu, first } = await boot();
    await emu.post("/_emulator/faults", crashAt(5000));
    let status = 0;
    const pending = emu.get("/lb/api/hang").then((r) => ((status = r.status), r));
    await emu.advance(4999);
    expect(status).toBe(0);
    expect(emu.core.loadBalancers.workers("api").map((w) => [w.id, w.inFlight])).toEqual([[first, 1]]);
    await emu.advance(1);
    const crashed = await pending;
    expect(crashed.status).toBe(502);
    expect(crashed.headers.get("x-runpod-worker-id")).toBe(first);
    expect(crashed.body.error).toBe(`bad gateway: worker ${first} crashed 5000 ms into the request (fault rule fault-1)`);
    const next = await emu.get("/lb/api/hello");
    expect(next.status).toBe(200);
    expect(next.headers.get("x-runpod-worker-id")).not.toBe(first);
  });

  it("cuts an answer that is streaming when the crash comes: the body breaks", async () => {
    const { emu, first } = await boot();
    await emu.post("/_emulator/faults", crashAt(2000));
    const res = await emu.stream("/lb/api/stream");
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("data: 0\n\n");
    const rest = reader.read().then(
      (next) => (next.done ? "ended" : "more"),
      (e: Error) => e.message,
    );
    await emu.advance(2000);
    expect(await rest).toMatch(/crashed 2000 ms into the request/);
    expect(emu.core.loadBalancers.workers("api").map((w) => w.id)).not.toContain(first);
  });

  it("an answer that ends first is the client's; the worker dies as it ends", async () => {
    const { emu, first } = await boot();
    await emu.post("/_emulator/faults", crashAt(60_000));
    const r = await emu.get("/lb/api/hello");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ hello: "world" });
    expect(r.headers.get("x-runpod-worker-id")).toBe(first);
    expect(emu.core.loadBalancers.workers("api").map((w) => w.id)).not.toContain(first);
    // Nothing is left to fire later.
    await emu.advance(60_000);
    expect((await emu.get("/lb/api/hello")).status).toBe(200);
  });

  it("without atMs, still fells the worker as the request reaches it", async () => {
    const { emu, first } = await boot();
    await emu.post("/_emulator/faults", { endpoint: "api", fault: { type: "worker-crash" }, times: 1 });
    const r = await emu.get("/lb/api/hang");
    expect(r.status).toBe(502);
    expect(r.body.error).toBe(`bad gateway: worker ${first} crashed (fault rule fault-1)`);
  });
});
