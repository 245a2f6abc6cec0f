import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { parseAnswer, rawExchange } from "../support/raw-http.js";

/**
 * The path a load-balancing endpoint's worker gets: the request's path after `/lb/{endpoint_id}`
 * (or the whole path, by host), with its dot segments resolved as a proxy in front of the
 * service's workers resolves them (RFC 3986's remove_dot_segments, `%2e` read as a dot), within
 * the worker's own path space: never above its `/`, never into another endpoint's. Over raw
 * sockets, since fetch resolves dot segments itself; through the relay before the app (workers
 * given by URL), through the app (a fetch handler, or any endpoint while a fault rule is armed),
 * and for WebSocket upgrades.
 */
let emu: Emulator;
const servers: Server[] = [];
const seen: Record<string, string[]> = { a: [], b: [] };

async function worker(name: "a" | "b"): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url === "/ping") return void res.writeHead(200).end("ok");
    seen[name]!.push(req.url!);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ worker: name, url: req.url }));
  });
  server.on("upgrade", (req, socket) => {
    seen[name]!.push(`upgrade ${req.url}`);
    socket.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const [a, b] = [await worker("a"), await worker("b")];
  const fn = (req: Request) => Response.json({ worker: "fn", url: new URL(req.url).pathname + new URL(req.url).search });
  emu = await createEmulator({
    clock: "manual",
    config: {
      endpoints: [
        { id: "a", type: "LOAD_BALANCER", handler: a },
        { id: "b", type: "LOAD_BALANCER", handler: b },
        { id: "fn", type: "LOAD_BALANCER", handler: fn, workersMin: 1, coldStartMs: 0 },
      ],
    } as never,
  });
  await emu.clock.advance(0);
  // Each worker joins its pool once its /ping says 200.
  for (const id of ["a", "b"]) expect((await fetch(`${emu.url}/lb/${id}/warm`, { headers: { authorization: "k" }, signal: AbortSignal.timeout(10_000) })).status).toBe(200);
  seen.a!.length = seen.b!.length = 0;
});
afterAll(async () => {
  await emu?.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function get(target: string, host = `127.0.0.1:${emu.port}`) {
  const res = parseAnswer(await rawExchange(emu.port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: k\r\nConnection: close\r\n\r\n`, "", false));
  expect(res.status, `${host} ${target}: ${res.body}`).toBe(200);
  return JSON.parse(res.body) as { worker: string; url: string };
}

/** Request target → what the worker of that endpoint gets. */
const CASES: Array<[string, string]> = [
  ["/../../x", "/x"],
  ["/%2e%2e/%2E%2e/x?q=1", "/x?q=1"],
  ["/.%2e/x", "/x"],
  ["/./y/./z", "/y/z"],
  ["/y/z/..", "/y/"],
  ["/y/%2e", "/y/"],
  ["/y/../../../z?next=../a", "/z?next=../a"],
  ["//evil.example/x", "/evil.example/x"],
  // A backslash in the leading run is a slash to WHATWG's URL parser: `/\\host` names another host too.
  ["/\\evil.example/x", "/evil.example/x"],
  ["/\\/\\evil.example/x?q=\\", "/evil.example/x?q=\\"],
  ["/./\\evil.example/x", "/evil.example/x"],
  ["/../\\\\evil.example/x", "/evil.example/x"],
  // Past the leading run a backslash is part of a segment: sent percent-encoded, on every way in.
  ["/x\\y", "/x%5Cy"],
  ["/\\evil.example/a\\b?q=\\", "/evil.example/a%5Cb?q=\\"],
  ["/x\\..\\..\\y", "/x%5C..%5C..%5Cy"],
  ["/y//z", "/y//z"],
  ["/..%2fx", "/..%2fx"],
  ["/.hidden/..more", "/.hidden/..more"],
];

describe("a load-balancing endpoint's path, dot segments and all", () => {
  it("reaches a worker given by URL (the relay before the app) resolved within its own path space", async () => {
    for (const [sent, got] of CASES) expect(await get(`/lb/a${sent}`), sent).toEqual({ worker: "a", url: got });
    expect(seen.b).toEqual([]);
  });

  it("never reaches another endpoint's worker: /lb/a/../b/x is a's /b/x", async () => {
    expect(await get("/lb/a/../b/x")).toEqual({ worker: "a", url: "/b/x" });
    expect(await get("/lb/a/%2e%2e/b/x")).toEqual({ worker: "a", url: "/b/x" });
    expect(await get("/lb/fn/../a/x")).toEqual({ worker: "fn", url: "/a/x" });
    expect(seen.b).toEqual([]);
  });

  it("names its endpoint by the id decoded as the router decodes it, and the worker's path starts after the id as sent", async () => {
    expect(await get("/lb/%61/x/y?q=1")).toEqual({ worker: "a", url: "/x/y?q=1" });
    expect(await get("/lb/%66%6E/x/y")).toEqual({ worker: "fn", url: "/x/y" });
    expect(await get("/lb/%66n")).toEqual({ worker: "fn", url: "/" });
    expect(await get("/lb/%61/%2e%2e/\\evil.example/x")).toEqual({ worker: "a", url: "/evil.example/x" });
    // The gate counts it as the endpoint's request.
    expect(emu.requests({ endpoint: "a" }).requests.at(-1)).toMatchObject({ operation: "lb", status: 200 });
  });

  it("in absolute form (GET http://host/lb/...), resolved the same way", async () => {
    expect(await get(`http://127.0.0.1:${emu.port}/lb/a//evil.example/x`)).toEqual({ worker: "a", url: "/evil.example/x" });
    expect(await get(`http://127.0.0.1:${emu.port}/lb/a/\\evil.example/x`)).toEqual({ worker: "a", url: "/evil.example/x" });
    expect(await get(`http://127.0.0.1:${emu.port}/lb/fn/../\\evil.example/x`)).toEqual({ worker: "fn", url: "/evil.example/x" });
    expect(await get("http://evil.example//x", `a.localhost:${emu.port}`)).toEqual({ worker: "a", url: "/x" });
  });

  it("reaches a fetch handler (through the app) resolved the same way", async () => {
    for (const [sent, got] of CASES) expect(await get(`/lb/fn${sent}`), sent).toEqual({ worker: "fn", url: got });
  });

  it("by host ({endpoint_id}.localhost), resolved the same way", async () => {
    for (const [sent, got] of CASES) expect(await get(sent, `a.localhost:${emu.port}`), sent).toEqual({ worker: "a", url: got });
  });

  it("through the app while a fault rule is armed (the relay before it steps aside), resolved the same way", async () => {
    const rule = await fetch(`${emu.url}/_emulator/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ endpoint: "b", fault: { type: "http", status: 503 } }) });
    expect(rule.status).toBe(200);
    try {
      for (const [sent, got] of CASES) expect(await get(`/lb/a${sent}`), sent).toEqual({ worker: "a", url: got });
      expect(await get("/lb/a/../b/x")).toEqual({ worker: "a", url: "/b/x" });
    } finally {
      await fetch(`${emu.url}/_emulator/faults`, { method: "DELETE" });
    }
  });

  it("for a WebSocket upgrade, resolved the same way", async () => {
    seen.a!.length = 0;
    const head = `GET /lb/a/../../ws/%2e/x HTTP/1.1\r\nHost: 127.0.0.1:${emu.port}\r\nAuthorization: k\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    expect(await rawExchange(emu.port, head)).toMatch(/^HTTP\/1\.1 101/);
    expect(seen.a).toEqual(["upgrade /ws/x"]);
    // The id decoded as the router decodes it; a backslash in the leading run is a slash.
    seen.a!.length = 0;
    for (const target of ["/lb/%61/ws", "/lb/a/\\evil.example/ws", "/lb/a//\\evil.example/ws", "/lb/a/ws\\x"]) {
      expect(await rawExchange(emu.port, head.replace("/lb/a/../../ws/%2e/x", target)), target).toMatch(/^HTTP\/1\.1 101/);
    }
    expect(seen.a).toEqual(["upgrade /ws", "upgrade /evil.example/ws", "upgrade /evil.example/ws", "upgrade /ws%5Cx"]);
    const byHost = head.replace("/lb/a/../../ws/%2e/x", "/\\evil.example/ws").replace(`Host: 127.0.0.1:${emu.port}`, `Host: a.localhost:${emu.port}`);
    expect(await rawExchange(emu.port, byHost)).toMatch(/^HTTP\/1\.1 101/);
    expect(seen.a!.at(-1)).toBe("upgrade /evil.example/ws");
  });
});
