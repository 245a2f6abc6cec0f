import { rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { benchConfig } from "../lib/config.js";
import { API_KEY, BENCH, startMinipod } from "../lib/processes.js";
import { readProbe } from "./event-loop.js";

/**
 * A hostile pass over every surface minipod's one pipeline serves, with malformed, oversized, slow
 * and hostile inputs, over raw sockets on 127.0.0.1: the fast routes (`/run`, `/runsync`,
 * `/status`, `/health`), the relay to a real load-balancing worker (a small node server in the
 * bench's process), the Hono path (chunked bodies, GraphQL, the OpenAI routes, management REST,
 * the control API) and upgrades (WebSocket through `/lb` and by host, h2c, WebSockets elsewhere).
 * minipod runs from dist/ with lib/process-probe.mjs, whose event-loop delay monitor reports the
 * longest block every 50 ms; each surface's figure is the longest block reported while its cases
 * ran. Every case is bounded (10 s for an answer, at most `HOSTILE_REPEAT` times); the whole pass
 * is cut at 60 s.
 */

const MB = 1024 * 1024;
/** The longest a case waits for its answer: past it, the case is a hang. */
const ANSWER_MS = 10_000;
/** The whole pass is cut here. */
const PASS_MS = 60_000;

export interface HostileCase {
  surface: string;
  name: string;
  /** Every status seen, with its count (`hang`: nothing within 10 s; `closed`: closed without an answer). */
  statuses: Record<string, number>;
  /** The longest a run of it took, wall ms. */
  worstMs: number;
  /** The longest event-loop block reported while it ran (ms). */
  blockMs: number;
}

export interface HostileResult {
  cases: HostileCase[];
  /** Longest event-loop block per surface (ms). */
  blocks: Record<string, number>;
  idleBlockMs: number;
  rssBefore: number;
  rssPeak: number;
  rssAfter: number;
  /** `GET /health` while slow clients hold sockets: its worst wall ms. */
  healthUnderSlowMs: number;
  wallMs: number;
  cut: boolean;
}

/** What a raw exchange ended with: the status line's code, `hang` or `closed`. */
type Outcome = string;

interface RawOptions {
  /** Bytes written after the head, all at once. */
  body?: Buffer | string;
  /** Writes these pieces one at a time, `gapMs` apart (a slow client). */
  pieces?: Array<Buffer | string>;
  gapMs?: number;
  /** For an upgrade: bytes to send once the 101 has come, expecting them back. */
  afterUpgrade?: string;
}

/** Sends `head` (and a body) on a fresh socket; resolves with the answer's status once the server closes or answers whole. */
function raw(port: number, head: string, o: RawOptions = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, "127.0.0.1");
    let got = Buffer.alloc(0);
    let settled = false;
    let sentAfter = false;
    const done = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done("hang"), ANSWER_MS);
    const status = () => /^HTTP\/1\.[01] (\d{3})/.exec(got.toString("latin1", 0, Math.min(got.length, 64)))?.[1];
    socket.on("connect", async () => {
      socket.write(head);
      if (o.body !== undefined) socket.write(o.body);
      for (const piece of o.pieces ?? []) {
        if (settled || socket.destroyed) return;
        socket.write(piece);
        await new Promise((r) => setTimeout(r, o.gapMs ?? 100));
      }
    });
    socket.on("data", (d: Buffer) => {
      got = Buffer.concat([got, d]);
      const s = status();
      const headEnd = got.indexOf("\r\n\r\n");
      if (s === undefined || headEnd === -1) return;
      if (s === "101") {
        if (o.afterUpgrade === undefined) return done(s);
        if (!sentAfter) socket.write(o.afterUpgrade);
        sentAfter = true;
        if (got.subarray(headEnd + 4).toString("latin1").includes(o.afterUpgrade)) done("101");
        return;
      }
      const length = /\r\ncontent-length: *(\d+)/i.exec(got.toString("latin1", 0, headEnd + 2));
      if (length && got.length >= headEnd + 4 + Number(length[1])) done(s);
    });
    // A write refused once the server has answered and closed (EPIPE) is the client's: what it
    // read still says the answer.
    socket.on("error", () => {});
    socket.on("close", () => done(status() ?? "closed"));
  });
}

const auth = `Authorization: Bearer ${API_KEY}\r\n`;
const json = (method: string, path: string, body: string, host = "127.0.0.1", extra = "") =>
  [`${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${extra}\r\n`, body] as const;
const chunked = (method: string, path: string, body: string) => {
  const parts: string[] = [];
  for (let i = 0; i < body.length; i += 64 * 1024) {
    const part = body.slice(i, i + 64 * 1024);
    parts.push(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
  }
  return [`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`, `${parts.join("")}0\r\n\r\n`] as const;
};
const get = (path: string, host = "127.0.0.1", extra = "") => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Connection: close\r\n${extra}\r\n`;
const upgrade = (path: string, host = "127.0.0.1", extra = auth) =>
  `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;

/** 100,000 small objects in one OpenAI chat body (about 3 MB of messages). */
const manyMessages = () => JSON.stringify({ model: "minipod-llm", max_tokens: 4, messages: Array.from({ length: 100_000 }, (_, i) => ({ role: "user", content: `m${i % 10}` })) });
/** 100,000 small objects in 1.0 MB (just under 1 MiB) of a job's input. */
const manyObjects = () => JSON.stringify({ input: { items: Array.from({ length: 100_000 }, (_, i) => ({ r: [i % 10] })) } });
const deep = (n: number) => `{"input":${"[".repeat(n)}${"]".repeat(n)}}`;
/** A json_schema whose value would be huge: long property names under minItems. */
const hugeSchema = () => {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 2000; i++) properties[`p${i}_${"x".repeat(200)}`] = { type: "string" };
  return JSON.stringify({
    model: "minipod-llm",
    messages: [{ role: "user", content: "hi" }],
    response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "array", minItems: 1000, items: { type: "object", properties, required: Object.keys(properties) } } } },
  });
};

const workerSockets = new Set<Socket>();

/** A load-balancing worker: /ping 200, echo, raw answers no client can be given, and upgrades echoed. */
function lbWorker(): Server {
  const server = createServer((req, res) => {
    if (req.url === "/ping") return void res.writeHead(200).end("ok");
    if (req.url === "/status700") return void req.socket.end("HTTP/1.1 700 Odd\r\ncontent-length: 2\r\n\r\nhi");
    if (req.url === "/stray") {
      res.writeHead(200, { "content-length": "2" }).end("ok");
      setTimeout(() => req.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstray"), 20);
      return;
    }
    if (req.url === "/drop") return void req.socket.destroy();
    let n = 0;
    req.on("data", (d: Buffer) => (n += d.length));
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: req.url, bytes: n })));
  });
  server.keepAliveTimeout = 30_000;
  server.on("upgrade", (req, socket: Socket) => {
    workerSockets.add(socket);
    socket.on("close", () => workerSockets.delete(socket));
    socket.on("error", () => {});
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.on("data", (d: Buffer) => socket.write(d));
  });
  return server;
}

type Case = { name: string; times?: number; run: (port: number) => Promise<Outcome> };

/** The body of a raw exchange's answer (after its head), once the server has closed. */
function rawBody(port: number, head: string, body = ""): Promise<{ status: Outcome; body: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(head + body));
    let got = "";
    const timer = setTimeout(() => socket.destroy(), ANSWER_MS);
    socket.on("data", (d: Buffer) => (got += d.toString("utf8")));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ status: /^HTTP\/1\.[01] (\d{3})/.exec(got)?.[1] ?? "closed", body: got.slice(got.indexOf("\r\n\r\n") + 4) });
    });
  });
}

/** A webhook receiver that answers 200 with a body that never ends (in 64 KB writes, while the socket takes them). */
function endlessReceiver(): Server {
  return createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(500 * MB) });
    const chunk = Buffer.alloc(64 * 1024, "e");
    const write = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once("drain", write);
    };
    write();
  });
}

/** Polls a job's status until it is final (or 10 s pass); its status, or the answer's. */
async function finalStatus(port: number, id: string): Promise<string> {
  const deadline = Date.now() + ANSWER_MS;
  for (;;) {
    const r = await rawBody(port, get(`/v2/echo/status/${id}`));
    const status = /"status":"([A-Z_]+)"/.exec(r.body)?.[1];
    if (r.status !== "200" || (status !== "IN_QUEUE" && status !== "IN_PROGRESS")) return r.status === "200" ? status! : r.status;
    if (Date.now() > deadline) return "hang";
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Cases whose 502 is the documented answer: a worker that answers what no client can be given, or nothing. */
const GATEWAY = /status700|\/drop/;
/** Cases whose 501 is the documented answer: a WebSocket to a worker in minipod's process. */
const IN_PROCESS_UPGRADE = /in-process handler/;

function surfaces(receiverUrl: string): Array<{ surface: string; cases: Case[] }> {
  const mo = manyObjects();
  const mm = manyMessages();
  const hs = hugeSchema();
  const r = (name: string, head: string | readonly [string, string], o: RawOptions = {}, times = 3): Case => ({
    name,
    times,
    run: (port) => (typeof head === "string" ? raw(port, head, o) : raw(port, head[0], { ...o, body: head[1] })),
  });
  return [
    {
      surface: "fast routes (/run, /runsync, /status, /health)",
      cases: [
        r("POST /run, a valid small job", json("POST", "/v2/echo/run", '{"input":{"x":1}}'), {}, 20),
        r("POST /run, malformed JSON", json("POST", "/v2/echo/run", '{"input":')),
        r("POST /run, a JSON array", json("POST", "/v2/echo/run", "[1,2]")),
        r("POST /run, invalid UTF-8", json("POST", "/v2/echo/run", "x".repeat(14))[0], { body: Buffer.concat([Buffer.from('{"input":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]) }),
        r("POST /run, 10,000 nested arrays", json("POST", "/v2/echo/run", deep(10_000))),
        r("POST /run, 100,000 small objects (1.0 MB, the handler parses it in minipod's process)", json("POST", "/v2/echo/run", mo)),
        r("POST /runsync, 100,000 small objects (1.0 MB, answered whole)", json("POST", "/v2/echo/runsync", mo), {}, 2),
        r("POST /run, Content-Length of 11 MB declared, 1 KB sent", `POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${11 * MB}\r\n\r\n`, { body: "x".repeat(1024) }),
        r("POST /run, 11 MB sent whole (the 413 is read)", json("POST", "/v2/echo/run", `{"input":"${"z".repeat(11 * MB)}"}`), {}, 3),
        r("POST /run, Content-Length not a number", `POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: 12abc\r\n\r\n{"input":{}}`),
        r("POST /run\\x (a raw byte in the target)", `POST /v2/echo/run\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: 2\r\n\r\n{}`),
        r("OPTIONS * (no path)", `OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
        r("GET /status of an unknown id", get("/v2/echo/status/nope")),
        r("GET /status, a 10 KB id", get(`/v2/echo/status/${"a".repeat(10_000)}`)),
        r("GET /status, a dot-dot id", get("/v2/echo/status/..%2F..%2F_emulator%2Freset")),
        r("GET /health", get("/v2/echo/health"), {}, 20),
        r("GET /health, a 20 KB header", get("/v2/echo/health", "127.0.0.1", `X-Big: ${"b".repeat(20_000)}\r\n`)),
        r("GET /health, Host evil.example", get("/v2/echo/health", "evil.example")),
        r("POST /run from another origin (a form's text/plain)", `POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`),
        r("POST /run, slow head: a byte per 15 ms", "", { pieces: [...json("POST", "/v2/echo/run", '{"input":{}}').join("")], gapMs: 15 }, 2),
        r("POST /run, slow body: a byte per 100 ms", json("POST", "/v2/echo/run", '{"input":{}}')[0], { pieces: [...'{"input":{}}'], gapMs: 100 }, 2),
      ],
    },
    {
      surface: "relay to a load-balancing worker process",
      cases: [
        r("GET /lb/api/x", get("/lb/api/x"), {}, 20),
        r("POST /lb/api/x, 1 MB body", json("POST", "/lb/api/x", "y".repeat(MB))),
        r("POST /lb/api/x, 31 MB declared", `POST /lb/api/x HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: ${31 * MB}\r\n\r\n`, { body: "x".repeat(1024) }),
        r("GET /lb/%61pi/x (the id percent-encoded)", get("/lb/%61pi/x")),
        r("GET /lb/api/\\evil.example/x", get("/lb/api/\\evil.example/x")),
        r("GET /lb/api//evil.example/x", get("/lb/api//evil.example/x")),
        r("GET /lb/api/../../_emulator/reset", get("/lb/api/../../_emulator/reset")),
        r("GET /lb/api/status700 (a worker's status outside 200-599)", get("/lb/api/status700")),
        r("GET /lb/api/stray (a worker's stray answer after a complete one)", get("/lb/api/stray"), {}, 4),
        r("GET /lb/api/drop (the worker resets)", get("/lb/api/drop")),
        r("GET /lb/nope/x (no such endpoint)", get("/lb/nope/x")),
        r("GET /lb/api/x without a key", `GET /lb/api/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
        r("GET / on api.localhost (by host)", get("/x", "api.localhost")),
      ],
    },
    {
      surface: "Hono (chunked bodies, GraphQL, OpenAI, REST, control)",
      cases: [
        r("POST /run, chunked", chunked("POST", "/v2/echo/run", '{"input":{"x":1}}'), {}, 10),
        r("POST /run, chunked, 100,000 small objects", chunked("POST", "/v2/echo/run", mo)),
        r("POST /run, chunked, 11 MB (refused while read)", chunked("POST", "/v2/echo/run", `{"input":"${"z".repeat(11 * MB)}"}`), {}, 1),
        r("POST /lb/api/x, chunked", chunked("POST", "/lb/api/x", "hello")),
        r("POST /lb/api/status700, chunked", chunked("POST", "/lb/api/status700", "hello")),
        r("POST /lb/api/stray, chunked", chunked("POST", "/lb/api/stray", "hello"), {}, 4),
        r("POST /graphql, malformed", json("POST", "/graphql", '{"query":"{ myself { ')),
        r("POST /graphql, 5,000 aliases", json("POST", "/graphql", JSON.stringify({ query: `{ ${Array.from({ length: 5000 }, (_, i) => `a${i}: myself { id }`).join(" ")} }` }))),
        r("POST /graphql, nested 500 deep", json("POST", "/graphql", JSON.stringify({ query: `{ ${"myself { ".repeat(500)}id${" }".repeat(500)} }` }))),
        r("POST openai chat, 100,000 messages (3 MB)", json("POST", "/v2/llm/openai/v1/chat/completions", mm), {}, 2),
        r("POST openai chat, a json_schema of 2,000 long names under minItems 1000", json("POST", "/v2/llm/openai/v1/chat/completions", hs)),
        r("POST openai chat, malformed", json("POST", "/v2/llm/openai/v1/chat/completions", '{"model":')),
        r("POST lb openai chat, 100,000 messages", json("POST", "/lb/lbo/v1/chat/completions", mm), {}, 2),
        r("POST lb openai chat, a huge json_schema", json("POST", "/lb/lbo/v1/chat/completions", hs)),
        r("POST /v2/templates, junk", json("POST", "/v2/templates", '{"name":1,"imageName":[{}]}')),
        r("POST /v1/endpoints, 5 MB name (sent whole: the 413 is read)", json("POST", "/v1/endpoints", JSON.stringify({ name: "n".repeat(5 * MB) })), {}, 3),
        r("POST /lb/api/x, 31 MB sent whole (the 413 is read)", json("POST", "/lb/api/x", " ".repeat(31 * MB)), {}, 2),
        r("GET /v1/endpoints?limit=-1e308", get("/v1/endpoints?limit=-1e308")),
        r("POST /_emulator/faults, malformed", json("POST", "/_emulator/faults", "{")),
        r("POST /_emulator/clock/advance, 1e308 ms", json("POST", "/_emulator/clock/advance", '{"ms":1e308}')),
      ],
    },
    {
      surface: "peers and control (webhooks, CSP reports, fault rules)",
      cases: [
        {
          name: "a job whose webhook receiver answers a body of 500 MB that never ends: the job's final status",
          times: 2,
          run: async (port) => {
            const r = await rawBody(port, ...json("POST", "/v2/echo/run", JSON.stringify({ input: { x: 1 }, webhook: `${receiverUrl}/hook` })));
            const id = /"id":"([^"]+)"/.exec(r.body)?.[1];
            return id ? finalStatus(port, id) : r.status;
          },
        },
        {
          name: "a job whose webhook is minipod's own /_emulator/reset: the job is still there after",
          times: 2,
          run: async (port) => {
            const r = await rawBody(port, ...json("POST", "/v2/echo/run", JSON.stringify({ input: { x: 1 }, webhook: `http://127.0.0.1:${port}/_emulator/reset` })));
            const id = /"id":"([^"]+)"/.exec(r.body)?.[1];
            if (!id) return r.status;
            await finalStatus(port, id);
            await new Promise((resolve) => setTimeout(resolve, 300));
            return (await rawBody(port, get(`/v2/echo/status/${id}`))).status;
          },
        },
        r("a CSP report from another origin to /graphql", `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\nContent-Type: application/csp-report\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`),
        {
          name: "1,001 fault rules that may still fire: the status of the last one's add",
          times: 1,
          run: async (port) => {
            const rule = JSON.stringify({ endpoint: "echo", operation: "purge-queue", fault: { type: "http", status: 503 }, times: 1 });
            let last = "";
            for (let i = 0; i < 1001; i += 50) {
              const batch = await Promise.all(Array.from({ length: Math.min(50, 1001 - i) }, () => rawBody(port, ...json("POST", "/_emulator/faults", rule))));
              last = batch.at(-1)!.status;
            }
            const health = await rawBody(port, get("/v2/echo/health"));
            await rawBody(port, `DELETE /_emulator/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
            return `${last} (then /health ${health.status})`;
          },
        },
      ],
    },
    {
      surface: "upgrades (WebSocket through /lb and by host, h2c, WebSocket elsewhere)",
      cases: [
        r("WebSocket /lb/api/ws, a message echoed", upgrade("/lb/api/ws"), { afterUpgrade: "hello" }, 10),
        r("WebSocket by host api.localhost, a message echoed", upgrade("/ws", "api.localhost"), { afterUpgrade: "hello" }, 5),
        r("WebSocket /lb/api/ws without a key", upgrade("/lb/api/ws", "127.0.0.1", "")),
        r("WebSocket /lb/nope/ws", upgrade("/lb/nope/ws")),
        r("WebSocket /lb/lbo/ws (in-process handler)", upgrade("/lb/lbo/ws")),
        r("WebSocket /v2/echo/health (no WebSocket route)", upgrade("/v2/echo/health")),
        r("h2c on POST /run", `POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Connection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"input":{}}`),
        r("WebSocket /lb/api/ws, a 20 KB header", upgrade("/lb/api/ws", "127.0.0.1", `${auth}X-Big: ${"b".repeat(20_000)}\r\n`)),
        r("WebSocket /lb/api/ws, Host evil.example", upgrade("/lb/api/ws", "evil.example")),
      ],
    },
  ];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the pass against a fresh minipod from dist/. */
export async function hostile(log: (line: string) => void): Promise<HostileResult> {
  const started = Date.now();
  const worker = lbWorker();
  await new Promise<void>((r) => worker.listen(0, "127.0.0.1", r));
  const workerUrl = `http://127.0.0.1:${(worker.address() as AddressInfo).port}`;
  const probeFile = join(tmpdir(), `minipod-bench-probe-${process.pid}-hostile.jsonl`);
  rmSync(probeFile, { force: true });
  const config = {
    ...(await benchConfig([
      { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 0, idleTimeout: 3600 },
      { id: "llm", handler: "openai", workersMin: 1, coldStartMs: 0, idleTimeout: 3600 },
      { id: "api", type: "LOAD_BALANCER", handler: workerUrl, requestCount: 8 },
      { id: "lbo", type: "LOAD_BALANCER", handler: "openai", coldStartMs: 0 },
    ])),
  };
  const receiver = endlessReceiver();
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const server = await startMinipod({ config, probeFile, probeMs: 50 });
  const port = Number(new URL(server.url).port);
  const cases: HostileCase[] = [];
  const blocks: Record<string, number> = {};
  let cut = false;
  let healthUnderSlowMs = 0;
  try {
    await raw(port, get("/lb/api/warm"));
    await sleep(1000);
    const idleFrom = Date.now();
    await sleep(600);
    const idle = readProbe(probeFile).filter((l) => l.wall >= idleFrom);
    const idleBlockMs = Math.max(0, ...idle.map((l) => l.loopMaxMs));
    const rssBefore = idle.at(-1)?.rss ?? 0;
    for (const { surface, cases: list } of surfaces(receiverUrl)) {
      const from = Date.now();
      for (const c of list) {
        if (Date.now() - started > PASS_MS - ANSWER_MS) {
          cut = true;
          break;
        }
        const statuses: Record<string, number> = {};
        let worstMs = 0;
        const caseFrom = Date.now();
        // Up to 4 at once: concurrency without a flood.
        const times = c.times ?? 3;
        for (let i = 0; i < times; i += 4) {
          const batch = Array.from({ length: Math.min(4, times - i) }, async () => {
            const t0 = performance.now();
            const outcome = await c.run(port);
            worstMs = Math.max(worstMs, performance.now() - t0);
            statuses[outcome] = (statuses[outcome] ?? 0) + 1;
          });
          await Promise.all(batch);
        }
        // A probe line reports the 50 ms before it: the lines up to 150 ms after the case's end.
        await sleep(150);
        const blockMs = Math.max(0, ...readProbe(probeFile).filter((l) => l.wall > caseFrom && l.wall <= Date.now()).map((l) => l.loopMaxMs));
        cases.push({ surface, name: c.name, statuses, worstMs, blockMs });
        log(`hostile: ${surface.split(" (")[0]}: ${c.name}: ${Object.entries(statuses).map(([s, n]) => `${s}×${n}`).join(" ")}, worst ${worstMs.toFixed(0)} ms, loop block ${blockMs.toFixed(0)} ms`);
      }
      await sleep(300);
      const to = Date.now();
      blocks[surface] = Math.max(0, ...readProbe(probeFile).filter((l) => l.wall > from && l.wall <= to).map((l) => l.loopMaxMs));
      if (cut) break;
    }
    // Slow clients holding sockets (a byte of head each 200 ms) while /health is asked.
    if (!cut) {
      const from = Date.now();
      const slow = Array.from({ length: 200 }, () => raw(port, "", { pieces: [...get("/v2/echo/health")], gapMs: 25 }));
      await sleep(500);
      for (let i = 0; i < 10; i++) {
        const t0 = performance.now();
        await raw(port, get("/v2/echo/health"));
        healthUnderSlowMs = Math.max(healthUnderSlowMs, performance.now() - t0);
        await sleep(100);
      }
      const outcomes: Record<string, number> = {};
      for (const o of await Promise.all(slow)) outcomes[o] = (outcomes[o] ?? 0) + 1;
      blocks["slow clients"] = Math.max(0, ...readProbe(probeFile).filter((l) => l.wall > from).map((l) => l.loopMaxMs));
      cases.push({ surface: "slow clients", name: "200 sockets sending a GET /health a byte per 25 ms", statuses: outcomes, worstMs: 0, blockMs: blocks["slow clients"] });
    }
    await sleep(1000);
    const lines = readProbe(probeFile);
    const rssPeak = Math.max(...lines.map((l) => l.rss));
    const rssAfter = lines.at(-1)?.rss ?? 0;
    return { cases, blocks, idleBlockMs, rssBefore, rssPeak, rssAfter, healthUnderSlowMs, wallMs: Date.now() - started, cut };
  } finally {
    await server.stop();
    // Its upgraded sockets are no longer the server's: ended here, and its close not waited for.
    for (const socket of workerSockets) socket.destroy();
    worker.closeAllConnections();
    worker.close();
    receiver.closeAllConnections();
    receiver.close();
    rmSync(probeFile, { force: true });
  }
}

/** The cases that saw a hang or a 5xx other than a worker's documented 502. */
export const found = (r: HostileResult): HostileCase[] =>
  r.cases.filter((c) => Object.keys(c.statuses).some((s) => s === "hang" || (s.startsWith("5") && !(s === "502" && GATEWAY.test(c.name)) && !(s === "501" && IN_PROCESS_UPGRADE.test(c.name)))));

/** The result as the body of bench/RESULTS-hostile.md. */
export function renderHostile(r: HostileResult): string {
  const surfaces = [...new Set(r.cases.map((c) => c.surface))];
  const bad = found(r);
  return [
    "## Longest event-loop block, by surface",
    "",
    `perf_hooks \`monitorEventLoopDelay\` (5 ms resolution) in minipod's process, reported every 50 ms; idle, the loop was blocked at most ${r.idleBlockMs.toFixed(0)} ms. ` +
      `A block includes the time the process waited for a core: on a machine shared with other work (the load average above), the cheapest cases (\`GET /health\`, a 401) show how much of a figure that is ` +
      `(their largest here: ${Math.max(0, ...r.cases.filter((c) => /^GET \/health$|without a key/.test(c.name)).map((c) => c.blockMs)).toFixed(0)} ms).`,
    "",
    "| surface | longest block, ms |",
    "|---|---:|",
    ...Object.entries(r.blocks).map(([s, ms]) => `| ${s} | ${ms.toFixed(0)} |`),
    "",
    `RSS: ${(r.rssBefore / MB).toFixed(0)} MB before, ${(r.rssPeak / MB).toFixed(0)} MB at its peak, ${(r.rssAfter / MB).toFixed(0)} MB after. ` +
      `\`GET /health\` while 200 slow clients held sockets: ${r.healthUnderSlowMs.toFixed(0)} ms at worst. The pass took ${(r.wallMs / 1000).toFixed(1)} s${r.cut ? " and was cut at its time bound" : ""}.`,
    "",
    bad.length ? `**Found**: ${bad.map((c) => `${c.name} (${Object.keys(c.statuses).join(", ")})`).join("; ")}.` : "No 5xx but the documented ones (502 for a worker that answers nothing or what no client can be given; 501 for a WebSocket to a worker in minipod's process), no hang.",
    "",
    ...surfaces.flatMap((s) => [
      `## ${s}`,
      "",
      "| case | statuses seen (× times) | slowest, ms | loop block, ms |",
      "|---|---|---:|---:|",
      ...r.cases
        .filter((c) => c.surface === s)
        .map((c) => `| ${c.name.replace(/\|/g, "\\|")} | ${Object.entries(c.statuses).map(([st, n]) => `${st} ×${n}`).join(", ")} | ${c.worstMs.toFixed(0)} | ${c.blockMs.toFixed(0)} |`),
      "",
    ]),
  ].join("\n");
}

/** Runs the pass and writes bench/RESULTS-hostile.md. */
export async function writeHostile(log: (line: string) => void): Promise<HostileResult> {
  const r = await hostile(log);
  const header = [
    "# A hostile pass over every surface",
    "",
    "Written by `npm run bench -- --only hostile` or `npx tsx bench/hostile.ts` (bench/sections/hostile.ts). Do not edit by hand.",
    "",
    `- date: ${new Date().toISOString()}`,
    `- node ${process.version}; minipod run from dist/ through bin/minipod.js; all traffic on 127.0.0.1; load average at the end ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`,
    "",
  ].join("\n");
  writeFileSync(join(BENCH, "RESULTS-hostile.md"), `${header}\n${renderHostile(r)}\n`);
  log("wrote bench/RESULTS-hostile.md");
  return r;
}
