import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { parseAnswer, rawExchange } from "../support/raw-http.js";

/**
 * minipod switches protocols only for a WebSocket to a load-balancing endpoint. Any other upgrade
 * (h2c, which Java's HttpClient asks of every HTTP/1.1 request; a WebSocket to another route) is
 * ignored, as RFC 9110 lets a server ignore `Upgrade`, and the request answered as the plain
 * HTTP/1.1 request it also is: its body read, the connection kept. Over raw sockets, so that the
 * exact bytes a client sends are what minipod reads.
 */
let emu: Emulator;
let worker: Server;
const seen: Array<{ url: string; headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  worker = createServer((req, res) => {
    if (req.url === "/ping") return void res.writeHead(200).end("ok");
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      seen.push({ url: req.url!, headers: req.headers, body });
      res.writeHead(200, { "content-type": "text/plain" }).end(`worker got ${req.method} ${req.url} ${body}`);
    });
  });
  await new Promise<void>((r) => worker.listen(0, "127.0.0.1", r));
  emu = await createEmulator({
    clock: "manual",
    config: {
      endpoints: [
        { id: "echo", handler: "echo", workersMin: 0, workersMax: 0 },
        { id: "node", type: "LOAD_BALANCER", handler: `http://127.0.0.1:${(worker.address() as AddressInfo).port}` },
      ],
    },
  });
  expect((await fetch(`${emu.url}/lb/node/warm`, { headers: { authorization: "k" }, signal: AbortSignal.timeout(10_000) })).status).toBe(200);
});
afterAll(async () => {
  await emu?.close();
  worker.closeAllConnections();
  await new Promise<void>((r) => worker.close(() => r()));
});

const H2C = "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\n";

/** Every answer of a raw exchange, in order. */
function answers(text: string) {
  const out: Array<ReturnType<typeof parseAnswer>> = [];
  for (let rest = text; rest.startsWith("HTTP/1.1 "); ) {
    const parsed = parseAnswer(rest);
    const length = Number(parsed.headers["content-length"] ?? 0);
    out.push({ ...parsed, body: parsed.body.slice(0, length) });
    rest = rest.slice(rest.indexOf("\r\n\r\n") + 4 + length);
  }
  return out;
}

describe("an upgrade minipod does not take", () => {
  it("h2c on POST /run: the job is made from the body, and the connection serves the next request", async () => {
    const body = '{"input":{"from":"h2c"}}';
    const text = await rawExchange(
      emu.port,
      `POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\n${H2C}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        `GET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\n${H2C}Connection: close\r\n\r\n`,
      "",
      false,
    );
    const [run, health] = answers(text);
    expect(run!.status).toBe(200);
    expect(run!.headers.upgrade).toBeUndefined();
    const id = (JSON.parse(run!.body) as { id: string }).id;
    expect(health!.status).toBe(200);
    expect(JSON.parse(health!.body)).toHaveProperty("jobs");
    const status = await fetch(`${emu.url}/v2/echo/status/${id}`, { headers: { authorization: "k" } });
    expect(await status.json()).toMatchObject({ id, status: "IN_QUEUE" });
    // Journaled as any request.
    const journal = emu.requests({ endpoint: "echo" }).requests.map((r) => [r.method, r.path, r.status]);
    expect(journal).toContainEqual(["POST", "/v2/echo/run", 200]);
    expect(journal).toContainEqual(["GET", "/v2/echo/health", 200]);
  });

  it("30 h2c requests pipelined on one connection: each answered, in order, and nothing piles up on the socket", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on("warning", onWarning);
    try {
      const requests = Array.from({ length: 30 }, (_, i) => `GET /v2/echo/status/nope-${i} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\n${H2C}${i === 29 ? "Connection: close\r\n" : ""}\r\n`);
      const got = answers(await rawExchange(emu.port, requests.join(""), "", false));
      expect(got.map((a) => a.status)).toEqual(Array(30).fill(404));
      expect(got.map((a) => JSON.parse(a.body).detail as string).every((d, i) => d.includes(`nope-${i}`))).toBe(true);
      // Each declined upgrade gives the socket back to the server: listeners of the last are not left behind.
      expect(warnings.filter((w) => /MaxListeners/.test(w))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("h2c with a chunked body, and a WebSocket asked of a route that is no load-balancing endpoint's", async () => {
    const chunked = await rawExchange(
      emu.port,
      `POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\n${H2C}Transfer-Encoding: chunked\r\n\r\n6\r\n{"inpu\r\n11\r\nt":{"chunked":1}}\r\n0\r\n\r\n`,
    );
    expect(parseAnswer(chunked).status).toBe(200);
    const ws = await rawExchange(
      emu.port,
      "GET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    expect(parseAnswer(ws).status).toBe(200);
    expect(ws).not.toMatch(/^HTTP\/1\.1 101/);
    // Unknown routes and refusals keep their own answers: a 404 problem, a foreign Host's 403.
    const missing = parseAnswer(await rawExchange(emu.port, `GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n${H2C}\r\n`));
    expect(missing.status).toBe(404);
    expect(missing.headers["content-type"]).toBe("application/problem+json");
    const foreign = parseAnswer(await rawExchange(emu.port, `GET /v2/echo/health HTTP/1.1\r\nHost: evil.example\r\nAuthorization: k\r\n${H2C}\r\n`));
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).detail).toContain("Host 'evil.example' is not allowed");
  });

  it("h2c to a load-balancing endpoint: the worker gets a plain request, without the upgrade's headers", async () => {
    seen.length = 0;
    const text = await rawExchange(emu.port, `POST /lb/node/hi HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\n${H2C}Content-Length: 5\r\nConnection: close\r\n\r\nhello`, "", false);
    const answer = parseAnswer(text);
    expect([answer.status, answer.body]).toEqual([200, "worker got POST /hi hello"]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.upgrade).toBeUndefined();
    expect(seen[0]!.headers["http2-settings"]).toBeUndefined();
    expect(seen[0]!.headers.connection).not.toMatch(/upgrade/i);
  });
});
