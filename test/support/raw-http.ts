import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { afterAll, afterEach, beforeAll } from "vitest";
import { createEmulator, type Emulator, type EmulatorOptions } from "../../src/compose/emulator.js";
import type { JournalEntry } from "../../src/domain/observability.js";
import type { App } from "../../src/http/app.js";
import { connect } from "node:net";

/** An answer as tests compare them: status, headers (see `comparable`), body text. */
export interface Got {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** Headers as compared: names in lower case, without the date. */
export function comparable(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (k !== "date" && v !== undefined) out[k] = String(v);
  return out;
}

/** One request with node's client (`body` as given, none when undefined), read to its end. */
export function send(url: string, method: string, headers: Record<string, string>, agent: Agent, body?: string): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c)).on("end", () => resolve({ status: res.statusCode!, headers: comparable(res.headers), text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * A raw HTTP/1.1 exchange over one socket: what the server answers to exactly these bytes. The
 * client's side is closed once they are sent, unless `halfClose` is false (send `Connection:
 * close` then): a relay takes a client that has closed its side as gone.
 */
export function rawExchange(port: number, head: string, body = "", halfClose = true): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => (halfClose ? socket.end(head + body) : socket.write(head + body)));
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.on("end", () => resolve(text));
    socket.on("error", (e) => (text ? resolve(text) : reject(e)));
    socket.setTimeout(5000, () => socket.destroy(new Error("no answer within 5 s")));
  });
}

/** Status, headers (lower-case names) and body of a raw HTTP/1.1 answer. */
export function parseAnswer(text: string): { status: number; headers: Record<string, string>; body: string } {
  const end = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers["transfer-encoding"] === "chunked") {
    let out = "";
    for (let rest = body; ; ) {
      const nl = rest.indexOf("\r\n");
      const size = parseInt(rest.slice(0, nl), 16);
      if (!size) break;
      out += rest.slice(nl + 2, nl + 2 + size);
      rest = rest.slice(nl + 2 + size + 2);
    }
    body = out;
  }
  return { status: Number(statusLine!.split(" ")[1]), headers, body };
}

/** Calls `seen` with what the route table decided for each request: answered by a fast entry (true) or left to Hono. */
/**
 * The emulator of a describe whose requests are each sent twice, to a route's fast entry and to
 * the app (with a fault rule armed that matches nothing): made with `options` before its tests
 * and handed to `made`, its fault rules cleared after each test, closed after all with the agent
 * (keep-alive) the requests go through, which it answers. `taken` hears what the route table
 * decided for each request: a fast entry (true), or Hono.
 */
export function sentTwiceEmulator(options: EmulatorOptions, made: (emu: Emulator) => void, taken: (fast: boolean) => void): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  let emu: Emulator | undefined;
  beforeAll(async () => {
    emu = await createEmulator(options);
    made(emu);
    onTake(emu, taken);
  });
  afterEach(() => {
    emu?.faults.clear();
  });
  afterAll(async () => {
    agent.destroy();
    await emu?.close();
  });
  return agent;
}

/** The journal's newest entry. */
export function lastEntry(emu: Emulator): JournalEntry {
  return emu.requests({ limit: 1 }).requests[0]!;
}

export function onTake(emu: Emulator, seen: (taken: boolean) => void): void {
  const table = (emu.app as unknown as App).table;
  const take = table.take.bind(table);
  table.take = (req, res) => {
    const t = take(req, res);
    seen(t);
    return t;
  };
}
