import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mkdtempSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { callTool, connectMcp } from "../support/mcp.js";
import { recorder, type Recorder } from "../support/recorder.js";
import { workerTap, type WorkerTap } from "../support/worker-tap.js";

/**
 * Load-balancing endpoints with real clients and servers, unchanged: the `openai` SDK against the
 * built-in openai handler, a Node `http` server as an endpoint's worker (given by URL), and the
 * service's MCP server creating and reading a LOAD_BALANCER endpoint.
 */
let emu: Emulator;
let server: Server;
let rec: Recorder;
let tap: WorkerTap;
let nodeHits = 0;
const KEY = "lb-key";

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/ping") return void res.writeHead(200).end("ok");
    nodeHits++;
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      // Chunked, in two writes: relayed as it comes.
      res.writeHead(200, { "content-type": "application/json", "x-served-by": "node" });
      res.write(`{"method":"${req.method}","url":"${req.url}",`);
      res.end(`"body":${JSON.stringify(body)},"auth":${JSON.stringify(req.headers.authorization ?? null)}}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  // What minipod relays to the worker server, and its answers, recorded with the clients' exchanges.
  tap = await workerTap(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const config = (worker: string) => ({
    endpoints: [
      { id: "llm", type: "LOAD_BALANCER" as const, handler: "openai", workersMin: 1, coldStartMs: 0, openai: { models: ["my-model"], tokenDelayMs: 0 } },
      { id: "node", type: "LOAD_BALANCER" as const, handler: worker },
    ],
  });
  emu = await createEmulator({ clock: "manual", config: config(tap.url) });
  const client = "openai (JavaScript) and a worker HTTP server on load-balancing endpoints' routes";
  rec = await recorder(emu.url, { client, test: "test/e2e/load-balancer-clients.test.ts", clock: "manual", config: config("{worker}") });
});

afterAll(async () => {
  await rec?.close();
  await emu?.close();
  await tap?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

describe("load-balancing endpoints with real clients", () => {
  it("the openai SDK reaches the built-in openai handler with only a base URL", async () => {
    rec.scenario("openai-lb-routes", { about: "the built-in openai handler on /lb/{id}/v1: a chat completion, whole and streamed, the models, an unknown model" });
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${rec.url}/lb/llm/v1` });
    const chat = await openai.chat.completions.create({ model: "my-model", messages: [{ role: "user", content: "hello" }] });
    expect(chat.object).toBe("chat.completion");
    expect(chat.choices[0]!.message.content).toEqual(expect.any(String));
    const stream = await openai.chat.completions.create({ model: "my-model", stream: true, messages: [{ role: "user", content: "hello" }] });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(chat.choices[0]!.message.content);
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["my-model"]);
    // An unknown model is the handler's 404, in OpenAI's shape.
    await expect(openai.chat.completions.create({ model: "other", messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({ status: 404 });
    rec.pause();
  });

  it("a Node http server given by URL is the endpoint's worker, once its /ping says 200", async () => {
    rec.scenario("lb-worker-by-url", { about: "a request relayed to a worker HTTP server given by URL (method, path, query, body, key), and one without a key, refused", worker: tap });
    const res = await fetch(`${rec.url}/lb/node/items/1?full=true`, { method: "PUT", headers: { authorization: `Bearer ${KEY}` }, body: "payload", signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-served-by")).toBe("node");
    expect(res.headers.get("x-runpod-worker-id")).toBeTruthy();
    expect(await res.json()).toEqual({ method: "PUT", url: "/items/1?full=true", body: "payload", auth: `Bearer ${KEY}` });
    // No key, no request: the worker never sees it.
    const hits = nodeHits;
    expect((await fetch(`${rec.url}/lb/node/items/1`)).status).toBe(401);
    expect(nodeHits).toBe(hits);
    rec.pause();
  });

  it("answers alike before the app and through it: the journal, a chunked body, a fault, 413", async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    // Relayed before the app: recorded in the journal as any request.
    expect((await fetch(`${emu.url}/lb/node/direct?x=1`, { headers: auth })).status).toBe(200);
    const journal = (await (await fetch(`${emu.url}/_emulator/requests?endpoint=node`)).json()) as { requests: Array<{ path: string; query?: string; operation: string; status: number }> };
    expect(journal.requests.at(-1)).toMatchObject({ path: "/lb/node/direct", query: "x=1", operation: "lb", status: 200 });
    // A body of unknown length (chunked) goes through the app, read first.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${emu.url}/lb/node/upload`, { method: "POST", headers: { ...auth, "transfer-encoding": "chunked" } }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", reject);
      req.write("part1-");
      req.end("part2");
    });
    expect(chunked.status).toBe(200);
    expect(JSON.parse(chunked.body)).toMatchObject({ method: "POST", url: "/upload", body: "part1-part2" });
    // With a request fault armed the app answers; the fault fires on this endpoint, then the worker does.
    const fault = await (
      await fetch(`${emu.url}/_emulator/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ endpoint: "node", fault: { type: "http", status: 429, retryAfter: 1 }, times: 1 }),
      })
    ).json();
    expect((await fetch(`${emu.url}/lb/node/a`, { headers: auth })).status).toBe(429);
    const through = await fetch(`${emu.url}/lb/node/a`, { headers: auth });
    expect(through.status).toBe(200);
    expect(through.headers.get("x-served-by")).toBe("node");
    await fetch(`${emu.url}/_emulator/faults/${(fault as { id: string }).id}`, { method: "DELETE" });
    // A declared body above 30 MB is refused before it is sent on.
    const hits = nodeHits;
    const big = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${emu.url}/lb/node/upload`, { method: "POST", headers: { ...auth, "content-length": String(30 * 1024 * 1024 + 1) } }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => {
          resolve({ status: res.statusCode!, body });
          req.destroy();
        });
      });
      req.on("error", (e) => (e.message.includes("socket hang up") ? undefined : reject(e)));
      req.flushHeaders();
    });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).error).toMatch(/30 MB/);
    expect(nodeHits).toBe(hits);
  });

  it("a worker process registered on an external endpoint stays in its pool through a reset", async () => {
    const { port } = server.address() as AddressInfo;
    const local = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "ext", type: "LOAD_BALANCER", handler: "external" }] } });
    try {
      const registered = await fetch(`${local.url}/_emulator/load-balancers/ext/workers`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ workerId: "proc1", port }),
      });
      expect(registered.status).toBe(200);
      const call = () => fetch(`${local.url}/lb/ext/x`, { headers: { authorization: `Bearer ${KEY}` }, signal: AbortSignal.timeout(10_000) });
      expect((await call()).headers.get("x-runpod-worker-id")).toBe("proc1");
      await fetch(`${local.url}/_emulator/reset`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect((await call()).headers.get("x-runpod-worker-id")).toBe("proc1");
      // Gone for good (its launcher says it stopped): strict affinity to it answers 404.
      await fetch(`${local.url}/_emulator/load-balancers/ext/workers/proc1/exited`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ stopped: true }) });
      const gone = await fetch(`${local.url}/lb/ext/x`, { headers: { authorization: `Bearer ${KEY}`, "x-runpod-worker-id": "strict proc1" } });
      expect(gone.status).toBe(404);
      expect(await gone.json()).toEqual({ error: "affinity_worker_gone" });
    } finally {
      await local.close();
    }
  });

  it("the service's MCP server creates and reads a LOAD_BALANCER endpoint, whose base URL reaches it", async () => {
    let client: Client | undefined;
    try {
      ({ client } = await connectMcp(emu.url, KEY, mkdtempSync(join(tmpdir(), "minipod-lb-mcp-"))));
      const created = await callTool(client, "create-endpoint", {
        body: { name: "lb-api", type: "LOAD_BALANCER", image: "me/lb:1", gpu: { pools: ["ADA_24"] }, workers: { min: 1, max: 2 }, scaling: { type: "REQUEST_COUNT", requestCount: 3 } },
      });
      expect(created.isError, JSON.stringify(created.payload)).toBe(false);
      const id = created.payload.id as string;
      expect(created.payload).toMatchObject({
        type: "LOAD_BALANCER",
        scaling: { type: "REQUEST_COUNT", requestCount: 3 },
        requestUrls: { base: `${emu.url}/lb/${id}`, health: `${emu.url}/lb/${id}/ping` },
      });
      const read = await callTool(client, "get-endpoint", { id });
      expect(read.payload).toEqual(created.payload);
      await emu.clock.advance(1000);
      const res = await fetch(`${created.payload.requestUrls.base}/generate`, { method: "POST", headers: { authorization: `Bearer ${KEY}` }, body: JSON.stringify({ prompt: "hi" }) });
      expect(await res.json()).toMatchObject({ path: "/generate", body: { prompt: "hi" } });
    } finally {
      await client?.close();
    }
  }, 30_000);
});
