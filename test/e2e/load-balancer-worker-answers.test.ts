import { request } from "node:http";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/**
 * What a load-balancing endpoint's worker answers that no client can be given: a status outside
 * 200–599 (600 and above, under 100, a 101 to a request that asked for no upgrade), a status text
 * node refuses. The relay before the app and the app (a chunked body, or any `lb` fault rule
 * armed) answer the same 502 naming it, and the worker's slot is given back: with `requestCount:
 * 1` and one worker, the next request is answered, and the auto clock sees no real work left.
 * The worker is a raw TCP server writing exactly the bytes of each case.
 */
const ANSWERS: Record<string, string> = {
  "/s000": "HTTP/1.1 000 Zero\r\ncontent-length: 2\r\n\r\nhi",
  "/s099": "HTTP/1.1 099 Low\r\ncontent-length: 2\r\n\r\nhi",
  "/s600": "HTTP/1.1 600 High\r\ncontent-length: 2\r\n\r\nhi",
  "/s999": "HTTP/1.1 999 Higher\r\ncontent-length: 2\r\n\r\nhi",
  "/s101": "HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n",
  "/text": "HTTP/1.1 200 O\x01K\r\ncontent-length: 2\r\n\r\nhi",
};
const SAYS: Record<string, RegExp> = {
  "/s000": /answered status 0, not a final HTTP status \(200 to 599\)/,
  "/s099": /answered status 99, not a final HTTP status \(200 to 599\)/,
  "/s600": /answered status 600, not a final HTTP status \(200 to 599\)/,
  "/s999": /answered status 999, not a final HTTP status \(200 to 599\)/,
  "/s101": /answered (status 101, not a final HTTP status|nothing)/,
  "/text": /answer cannot be passed on: Invalid/,
};

let emu: Emulator;
let worker: Server;

/** Per request the worker read: its path and the number of the connection it came on. */
const served: Array<{ path: string; connection: number }> = [];
/** The worker's connections, by number. */
const connections: Socket[] = [];

/**
 * A worker that reads each request whole (a length or chunks) and writes the bytes its path
 * names, then closes; any other path is answered `ok` on a connection kept open.
 */
function rawWorker(): Server {
  return createServer((socket: Socket) => {
    let buf = "";
    const connection = connections.push(socket) - 1;
    socket.on("error", () => {});
    socket.on("data", (d: Buffer) => {
      buf += d.toString("latin1");
      const end = buf.indexOf("\r\n\r\n");
      if (end === -1) return;
      const head = buf.slice(0, end);
      const body = buf.slice(end + 4);
      const length = /content-length: *(\d+)/i.exec(head);
      if (/transfer-encoding: *chunked/i.test(head) ? !body.includes("0\r\n\r\n") : body.length < Number(length?.[1] ?? 0)) return;
      buf = "";
      const path = head.split(" ")[1]!;
      // An upgrade answered with bytes that never end a head.
      if (path === "/endless") return void socket.write(Buffer.alloc(100 * 1024, "x"));
      if (path === "/ping") return void socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
      served.push({ path, connection });
      if (ANSWERS[path] === undefined) return void socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
      socket.end(Buffer.from(ANSWERS[path], "latin1"));
    });
  });
}

beforeAll(async () => {
  worker = rawWorker();
  await new Promise<void>((r) => worker.listen(0, "127.0.0.1", r));
  emu = await createEmulator({
    config: { endpoints: [{ id: "w", type: "LOAD_BALANCER", handler: `http://127.0.0.1:${(worker.address() as AddressInfo).port}`, workersMax: 1, requestCount: 1 }] },
  });
  expect((await send("GET", "/lb/w/warm")).status).toBe(200);
});
afterAll(async () => {
  await emu?.close();
  for (const socket of connections) socket.destroy();
  await new Promise<void>((r) => worker.close(() => r()));
});

/** One request (a chunked body when `chunks` are given), its answer; bounded at 10 s. */
function send(method: string, path: string, chunks?: string[]): Promise<{ status: number; body: string; worker: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(`${emu.url}${path}`, { method, headers: { authorization: "k" }, agent: false, timeout: 10_000 }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, body, worker: res.headers["x-runpod-worker-id"] as string | undefined }));
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    req.on("error", reject);
    for (const c of chunks ?? []) req.write(c);
    req.end();
  });
}

const realWork = async () => ((await (await fetch(`${emu.url}/_emulator/clock`)).json()) as { realWork: boolean }).realWork;

const WAYS: Array<[string, (path: string) => ReturnType<typeof send>]> = [
  ["the relay (a body of known length)", (path) => send("GET", `/lb/w${path}`)],
  ["the app (a chunked body)", (path) => send("POST", `/lb/w${path}`, ["a", "b"])],
];

describe("a worker's answer no client can be given", () => {
  it.each(WAYS)("through %s: 502 naming it, and the worker's slot is free for the next request", async (_way, go) => {
    for (const path of Object.keys(ANSWERS)) {
      const bad = await go(path);
      expect(bad.status, path).toBe(502);
      expect(JSON.parse(bad.body).error, path).toMatch(SAYS[path]!);
      expect(bad.worker, path).toBeTruthy();
      // One worker with room for one request: the next is answered only if the slot came back.
      const next = await go("/ok");
      expect([next.status, next.body], path).toEqual([200, "ok"]);
      expect(await realWork(), path).toBe(false);
    }
  });

  it("through the app while an lb fault rule is armed, the same", async () => {
    emu.faults.add({ endpoint: "elsewhere", fault: { type: "worker-crash" } });
    try {
      for (const path of ["/s600", "/s101", "/text"]) {
        const bad = await send("GET", `/lb/w${path}`);
        expect(bad.status, path).toBe(502);
        expect(JSON.parse(bad.body).error, path).toMatch(SAYS[path]!);
        // The app reads a 101 itself; the relay's client calls it a broken answer.
        if (path === "/s101") expect(JSON.parse(bad.body).error).toMatch(/answered status 101/);
        expect((await send("GET", "/lb/w/ok")).status, path).toBe(200);
      }
    } finally {
      emu.faults.clear();
    }
    expect(await realWork()).toBe(false);
  });
});

describe("a worker that writes after its answer has ended", () => {
  it.each(WAYS)("through %s: the connection that sent the stray bytes is closed, and the next request gets its own answer", async (_way, go) => {
    expect(await go("/first")).toMatchObject({ status: 200, body: "ok" });
    const { connection } = served.at(-1)!;
    const socket = connections[connection]!;
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    // A second answer nobody asked for, on the connection minipod keeps for the next request.
    socket.write("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstray");
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error("minipod kept the connection that sent stray bytes")), 5000))]);
    const next = await go("/second");
    expect([next.status, next.body]).toEqual([200, "ok"]);
    expect(served.at(-1)).toMatchObject({ path: "/second" });
    expect(served.at(-1)!.connection).not.toBe(connection);
    expect(await realWork()).toBe(false);
  });
});

describe("a worker's answer to a WebSocket upgrade whose head never ends", () => {
  it("is cut after 64 KiB with 502, and the worker's slot is given back", async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const head = "GET /lb/w/endless HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n";
      const socket = connect(emu.port, "127.0.0.1", () => socket.write(`${head}Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`));
      let got = "";
      socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
      socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")));
    });
    expect(text).toMatch(/^HTTP\/1\.1 502 /);
    expect(text).toContain("more than 64 KiB and no end of its head");
    expect((await send("GET", "/lb/w/ok")).status).toBe(200);
    expect(await realWork()).toBe(false);
  });
});
