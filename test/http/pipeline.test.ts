import { Agent, createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import type { JournalEntry } from "../../src/domain/observability.js";
import { Gate } from "../../src/http/gate.js";
import { onTake, send as sendWith, type Got } from "../support/raw-http.js";

// minipod's socket has one request pipeline (src/http/pipeline.ts): whichever entry of the route
// table answers a request (the queue's fast routes, the relay to a worker process, or Hono), it
// passes the one gate (src/http/gate.ts) once, and the gate's answers (401, 429, the journal
// entry) are the same from every entry.

/** A fault rule that matches nothing: while one is armed, every request goes through Hono. */
const NOWHERE = { endpoint: "elsewhere", fault: { type: "latency" as const, ms: 1 } };

describe("one gate for every entry of the route table", () => {
  let worker: Server;
  let emu: Emulator;
  /** Per request: whether a fast entry took it. */
  let taken: boolean[];
  /** Per pass of the gate: the request's path. */
  let passed: string[];
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });

  beforeAll(async () => {
    worker = createServer((req, res) => void res.writeHead(200, { "content-type": "text/plain" }).end(`ok ${req.url}`));
    await new Promise<void>((r) => worker.listen(0, "127.0.0.1", r));
    emu = await createEmulator({
      clock: "manual",
      config: {
        auth: { keys: [{ key: "k" }] },
        rateLimits: { loadBalancer: { requests: 3 }, queue: { requestsPerWorker: 0 } },
        endpoints: [
          { id: "echo", handler: "echo", workersMin: 0, workersMax: 0 },
          { id: "node", type: "LOAD_BALANCER", handler: `http://127.0.0.1:${(worker.address() as AddressInfo).port}` },
        ],
      },
    });
    onTake(emu, (t) => taken.push(t));
    const pass = Gate.prototype.pass;
    vi.spyOn(Gate.prototype, "pass").mockImplementation(function (this: Gate, x) {
      passed.push(x.path);
      return pass.call(this, x);
    });
  });
  afterEach(() => {
    emu.faults.clear();
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    agent.destroy();
    await emu.close();
    await new Promise<void>((r) => worker.close(() => r()));
  });

  const send = (method: string, path: string, headers: Record<string, string> = { authorization: "Bearer k" }, body?: string) => sendWith(`${emu.url}${path}`, method, headers, agent, body);

  /** The answer and journal entry of a request sent as it is, then with every request left to Hono. */
  async function both(method: string, path: string, headers?: Record<string, string>): Promise<{ fast: Got; hono: Got; taken: boolean[]; entries: JournalEntry[] }> {
    taken = [];
    const fast = await send(method, path, headers);
    const first = emu.requests({ limit: 1 }).requests[0]!;
    emu.faults.add(NOWHERE);
    const hono = await send(method, path, headers);
    emu.faults.clear();
    const second = emu.requests({ limit: 1 }).requests[0]!;
    return { fast, hono, taken, entries: [first, second].map(({ at: _a, durationMs: _d, ...rest }) => rest as JournalEntry) };
  }

  it("passes a fast route, the relay and a Hono route through the same gate, once each", async () => {
    taken = [];
    passed = [];
    expect((await send("POST", "/v2/echo/run", undefined, '{"input":{}}')).status).toBe(200);
    expect((await send("GET", "/v2/echo/health")).status).toBe(200);
    expect(await send("GET", "/lb/node/x")).toMatchObject({ status: 200, text: "ok /x" });
    expect(taken).toEqual([true, false, true]);
    expect(passed).toEqual(["/v2/echo/run", "/v2/echo/health", "/lb/node/x"]);
  });

  it("journals a relayed request as Hono's route does", async () => {
    const r = await both("GET", "/lb/node/x?a=1");
    expect(r.taken).toEqual([true, false]);
    expect([r.fast.status, r.fast.text]).toEqual([r.hono.status, r.hono.text]);
    expect(r.entries[0]).toEqual(r.entries[1]);
    expect(r.entries[0]).toMatchObject({ method: "GET", path: "/lb/node/x", query: "a=1", endpoint: "node", status: 200 });
  });

  it.each([
    ["no key (401)", {}, 401],
    ["an unknown key (401)", { authorization: "Bearer nobody" }, 401],
    ["a request over the endpoint's rate limit (429)", { authorization: "Bearer k" }, 429],
  ] as const)("answers %s on the relay itself, as Hono's route does", async (_what, headers, status) => {
    const r = await both("GET", "/lb/node/x", headers);
    // The relay took it: the gate answered there, not by handing the request to Hono.
    expect(r.taken).toEqual([true, false]);
    expect(r.fast).toEqual(r.hono);
    expect(r.fast.status).toBe(status);
    expect(r.fast.headers["content-type"]).toBe("application/problem+json");
    expect(r.entries[0]).toEqual(r.entries[1]);
    expect(r.entries[0]!.response).toEqual(JSON.parse(r.fast.text));
  });
});
