import { createHash } from "node:crypto";
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/**
 * The relay to a worker's server that runs before the app (`LoadBalancerDirect`), against a real
 * Node `http` server given by URL: what the worker gets on reused connections, what the client
 * gets back (headers both ways, large bodies in both directions), and the relay's own answers
 * (502, 524, a client going away), with the journal recording each request.
 */
let emu: Emulator;
let worker: Server;
let workerHost = "";
const KEY = "relay-key";
const auth = { authorization: `Bearer ${KEY}` };
const seen: Array<{ url: string; headers: IncomingHttpHeaders; port: number }> = [];
const held: IncomingMessage[] = [];
const closedEarly: string[] = [];
const MB = 1024 * 1024;

beforeAll(async () => {
  worker = createServer((req, res) => {
    if (req.url === "/ping") return void res.writeHead(200).end("ok");
    seen.push({ url: req.url!, headers: req.headers, port: req.socket.remotePort! });
    if (req.url === "/hold") {
      // Answers only when the client or minipod goes away.
      held.push(req);
      // Its body read (a server that reads none never sees the connection close under it), then
      // its connection closes: the answer's close, or the body's end cut short.
      req.resume();
      let closed = false;
      const mark = () => void (closed || ((closed = true), closedEarly.push(req.url!)));
      res.once("close", mark);
      req.once("aborted", mark);
      return;
    }
    if (req.url === "/drop") return void req.socket.destroy();
    if (req.url === "/empty") return void res.writeHead(204, { "x-empty": "yes" }).end();
    if (req.url === "/big") {
      // 8 MB in 64 KB writes, each waiting for the socket to drain: the relay's back-pressure.
      const part = Buffer.alloc(64 * 1024, "z");
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(8 * MB) });
      let left = 128;
      const more = () => {
        while (left > 0) {
          left--;
          if (!res.write(part)) return void res.once("drain", more);
        }
        res.end();
      };
      return more();
    }
    const hash = createHash("sha256");
    let size = 0;
    req.on("data", (d: Buffer) => {
      size += d.length;
      hash.update(d);
    });
    req.on("end", () => {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.setHeader("keep-alive", "timeout=5");
      res.writeHead(201, "Made Here", { "content-type": "application/json", "x-worker-says": "hi" });
      res.end(JSON.stringify({ method: req.method, url: req.url, size, sha: hash.digest("hex") }));
    });
  });
  await new Promise<void>((r) => worker.listen(0, "127.0.0.1", r));
  workerHost = `127.0.0.1:${(worker.address() as AddressInfo).port}`;
  emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "relay", type: "LOAD_BALANCER", handler: `http://${workerHost}` }] } });
  // The worker joins the pool once its /ping says 200.
  expect((await fetch(`${emu.url}/lb/relay/warm`, { headers: auth, signal: AbortSignal.timeout(10_000) })).status).toBe(201);
});

afterAll(async () => {
  await emu?.close();
  worker.closeAllConnections();
  await new Promise<void>((r) => worker.close(() => r()));
});

/** One request through minipod with node's http (keep-alive off), its whole answer. */
function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
): Promise<{ status: number; statusMessage: string; headers: IncomingHttpHeaders; raw: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${emu.url}${path}`, { method: init.method ?? "GET", headers: { ...auth, ...init.headers }, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode!, statusMessage: res.statusMessage!, headers: res.headers, raw: res.rawHeaders, body: Buffer.concat(parts) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/** The journal's last entry for the endpoint. */
async function lastJournalEntry(): Promise<{ method: string; path: string; query?: string; operation: string; status: number }> {
  const journal = (await (await fetch(`${emu.url}/_emulator/requests?endpoint=relay`)).json()) as {
    requests: Array<{ method: string; path: string; query?: string; operation: string; status: number }>;
  };
  return journal.requests.at(-1)!;
}

describe("the relay to a worker's server", () => {
  it("gives every request the worker's own Host on connections kept open between requests", async () => {
    seen.length = 0;
    for (let i = 0; i < 3; i++) expect((await send(`/lb/relay/n/${i}`, { headers: { host: `localhost:${emu.port}` } })).status).toBe(201);
    expect(seen.map((s) => s.url)).toEqual(["/n/0", "/n/1", "/n/2"]);
    expect(seen.map((s) => s.headers.host)).toEqual([workerHost, workerHost, workerHost]);
    // One connection to the worker served the three: the client's were new each time.
    expect(new Set(seen.map((s) => s.port)).size).toBe(1);
    expect(await lastJournalEntry()).toMatchObject({ method: "GET", path: "/lb/relay/n/2", operation: "lb", status: 201 });
  });

  it("passes headers both ways but the connection's own, and keeps repeated ones and the status text", async () => {
    seen.length = 0;
    const r = await send("/lb/relay/h?q=1", { headers: { "x-custom": "one", "keep-alive": "timeout=9", te: "trailers", connection: "keep-alive, te" } });
    expect(r.status).toBe(201);
    expect(r.statusMessage).toBe("Made Here");
    expect(r.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(r.headers["x-worker-says"]).toBe("hi");
    expect(r.headers["x-runpod-worker-id"]).toBeTruthy();
    // The worker's keep-alive hint is its connection's; the client gets minipod's own.
    expect(r.raw.filter((_, i) => i % 2 === 1 && r.raw[i - 1]!.toLowerCase() === "keep-alive")).toEqual(["timeout=75"]);
    const got = seen[0]!;
    expect(got.url).toBe("/h?q=1");
    expect(got.headers["x-custom"]).toBe("one");
    expect(got.headers.authorization).toBe(auth.authorization);
    expect(got.headers.te).toBeUndefined();
    expect(got.headers["keep-alive"]).toBeUndefined();
    expect(await lastJournalEntry()).toMatchObject({ path: "/lb/relay/h", query: "q=1", status: 201 });
    // Answers without a body: to a HEAD (its length kept), and a 204.
    const head = await send("/lb/relay/h", { method: "HEAD" });
    expect([head.status, head.headers["content-type"], head.body.length]).toEqual([201, "application/json", 0]);
    const empty = await send("/lb/relay/empty", { method: "DELETE" });
    expect([empty.status, empty.headers["x-empty"], empty.body.length]).toEqual([204, "yes", 0]);
    // The endpoint's own path keeps its query too, as the app relays it.
    expect(JSON.parse((await send("/lb/relay?only=query")).body.toString())).toMatchObject({ url: "/?only=query" });
  });

  it("sends a large body on as it comes, with Expect: 100-continue, and relays a large answer whole", async () => {
    const upload = Buffer.alloc(6 * MB, "u");
    const r = await send("/lb/relay/upload", { method: "POST", headers: { "content-type": "application/octet-stream", expect: "100-continue" }, body: upload });
    expect(r.status).toBe(201);
    expect(JSON.parse(r.body.toString())).toEqual({ method: "POST", url: "/upload", size: upload.length, sha: createHash("sha256").update(upload).digest("hex") });
    // minipod answered the 100-continue; the worker gets the body without the header.
    expect(seen.at(-1)!.headers.expect).toBeUndefined();
    const big = await send("/lb/relay/big");
    expect(big.status).toBe(200);
    expect(big.body.length).toBe(8 * MB);
    expect(big.body.every((b) => b === "z".charCodeAt(0))).toBe(true);
  });

  it("answers 502 naming the worker when it answers nothing, and journals it", async () => {
    const r = await send("/lb/relay/drop");
    expect(r.status).toBe(502);
    expect(JSON.parse(r.body.toString()).error).toMatch(/bad gateway: worker .+ answered nothing/);
    expect(r.headers["x-runpod-worker-id"]).toBeTruthy();
    expect(await lastJournalEntry()).toMatchObject({ path: "/lb/relay/drop", status: 502 });
  });

  it("cancels the worker's request when the client goes away", async () => {
    closedEarly.length = 0;
    const req = request(`${emu.url}/lb/relay/hold`, { headers: auth, agent: false });
    req.on("error", () => {});
    req.end();
    await waitFor(() => held.length === 1);
    req.destroy();
    await waitFor(() => closedEarly.length === 1);
    held.length = 0;
    await waitFor(async () => (await lastJournalEntry()).path === "/lb/relay/hold");
    expect(await lastJournalEntry()).toMatchObject({ status: 499 });
  });

  it("cancels the worker's request when the client goes away in the middle of its body", async () => {
    closedEarly.length = 0;
    const req = request(`${emu.url}/lb/relay/hold`, { method: "POST", headers: { ...auth, "content-length": String(MB) }, agent: false });
    req.on("error", () => {});
    req.write(Buffer.alloc(64 * 1024, "p"));
    await waitFor(() => held.length === 1);
    req.destroy();
    await waitFor(() => closedEarly.length === 1);
    held.length = 0;
    await waitFor(async () => (await lastJournalEntry()).method === "POST");
    expect(await lastJournalEntry()).toMatchObject({ method: "POST", path: "/lb/relay/hold", status: 499 });
    expect((await send("/lb/relay/after")).status).toBe(201);
  });

  it("cuts a request processed longer than 5.5 minutes of virtual time with 524, and frees the worker", async () => {
    closedEarly.length = 0;
    const pending = send("/lb/relay/hold");
    await waitFor(() => held.length === 1);
    await emu.clock.advance(329_999);
    expect(closedEarly).toEqual([]);
    await emu.clock.advance(1);
    const r = await pending;
    expect(r.status).toBe(524);
    expect(JSON.parse(r.body.toString()).error).toMatch(/5\.5 minutes/);
    await waitFor(() => closedEarly.length === 1);
    held.length = 0;
    expect(await lastJournalEntry()).toMatchObject({ path: "/lb/relay/hold", status: 524 });
    // The worker's slot is free again.
    expect((await send("/lb/relay/after")).status).toBe(201);
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
}
