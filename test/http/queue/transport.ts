import { request as httpRequest } from "node:http";
import { createEmulator, type EmulatorOptions } from "../../../src/compose/emulator.js";
import type { App } from "../../../src/http/app.js";
import { API_KEY, checkV2Answer, inProcess } from "../../support/in-process.js";

/** Which part of minipod answered a request: a fast entry of the route table (src/http/fast-routes.ts) or the Hono app. */
export type AnsweredBy = "direct" | "app";

export interface QueueReply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
  answeredBy: AnsweredBy;
}

/**
 * One emulator on the manual clock, reached through one transport, as the shared queue suite
 * (queue.cases.ts) drives it. Every answer is checked against the service's v2 description, as
 * `inProcess` checks it.
 */
export interface QueueClient {
  /** Sends the API key (`Bearer test-key`) unless `headers` gives an authorization of its own. */
  request<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<QueueReply<T>>;
  get<T = any>(path: string, headers?: Record<string, string>): Promise<QueueReply<T>>;
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>): Promise<QueueReply<T>>;
  /** A request with exactly these headers and this body text (no key added, no JSON encoding). */
  raw<T = any>(method: string, path: string, headers?: Record<string, string>, body?: string): Promise<QueueReply<T>>;
  /** A POST that declares a body of `bytes` bytes in Content-Length and sends none of it. */
  declared<T = any>(path: string, bytes: number): Promise<QueueReply<T>>;
  /** Moves the manual clock and resolves once it settled. */
  advance(ms: number): Promise<void>;
  /** Timers the clock holds (held requests each hold one), read over HTTP. */
  pendingTimers(): Promise<number>;
  /** Resolves once the clock holds at least `n` timers: requests sent without waiting are held by then. */
  untilTimers(n: number): Promise<void>;
  /** In process only: the app's own fetch, answering without a promise when nothing waits. */
  appFetch: ((req: Request) => Response | Promise<Response>) | undefined;
  /** Over a socket only: the server's base URL, for clients other than fetch. */
  url: string | undefined;
  close(): Promise<void> | void;
}

export interface QueueTransport {
  name: string;
  /** Requests travel over a real socket (node's HTTP server) rather than into `app.request`. */
  socket: boolean;
  /** Whether POST /run and GET /status can be answered by their fast entries (only over a socket). */
  fastPath: boolean;
  start(options?: EmulatorOptions): Promise<QueueClient>;
  /** Every request this transport sent, with who answered it, across the clients it started. */
  readonly answered: Array<{ method: string; path: string; by: AnsweredBy }>;
}

const parse = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text; // not JSON
  }
};

const jsonInit = (method: string, body: unknown, headers: Record<string, string>): RequestInit => {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${API_KEY}`, ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  return init;
};

/** Builds the client from one function that sends a request and says who answered it. */
function client(
  extra: Pick<QueueClient, "appFetch" | "url">,
  send: (method: string, path: string, init: RequestInit) => Promise<{ res: Response; by: AnsweredBy }>,
  declaredPost: (path: string, bytes: number) => Promise<{ res: Response; by: AnsweredBy }>,
  advance: (ms: number) => Promise<void>,
  close: () => Promise<void> | void,
  log: QueueTransport["answered"],
): QueueClient {
  const reply = async <T>(method: string, path: string, sent: Promise<{ res: Response; by: AnsweredBy }>): Promise<QueueReply<T>> => {
    const { res, by } = await sent;
    const text = await res.text();
    checkV2Answer(method, path, res.status, res.headers, text);
    log.push({ method, path, by });
    return { status: res.status, headers: res.headers, body: parse(text) as T, text, answeredBy: by };
  };
  const request = <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => reply<T>(method, path, send(method, path, jsonInit(method, body, headers)));
  const c: QueueClient = {
    request,
    get: (path, headers) => request("GET", path, undefined, headers),
    post: (path, body, headers) => request("POST", path, body ?? {}, headers),
    raw: (method, path, headers = {}, body) => reply(method, path, send(method, path, { method, headers, ...(body === undefined ? {} : { body }) })),
    declared: (path, bytes) => reply("POST", path, declaredPost(path, bytes)),
    advance,
    pendingTimers: async () => (await c.get<{ pendingTimers: number }>("/_emulator/clock")).body.pendingTimers,
    untilTimers: async (n) => {
      // Bounded: each try is a request to the emulator, which gives the server a turn.
      for (let i = 0; i < 2_000; i++) if ((await c.pendingTimers()) >= n) return;
      throw new Error(`the clock never held ${n} timers (it holds ${await c.pendingTimers()})`);
    },
    close,
    ...extra,
  };
  return c;
}

/** Requests handed to the Hono app in process (`app.request`): the route table never sees them. */
export function inProcessTransport(): QueueTransport {
  const answered: QueueTransport["answered"] = [];
  return {
    name: "in-process",
    socket: false,
    fastPath: false,
    answered,
    async start(options = {}) {
      const e = await inProcess(options);
      const send = async (_method: string, path: string, init: RequestInit) => ({ res: await e.app.request(`http://minipod.test${path}`, init), by: "app" as const });
      // The app reads Content-Length as the client declared it (a socket would wait for the bytes).
      const declaredPost = (path: string, bytes: number) => send("POST", path, jsonInit("POST", "{}", { "content-length": String(bytes) }));
      return client({ appFetch: (req) => e.app.fetch(req), url: undefined }, send, declaredPost, (ms) => e.advance(ms), () => e.close(), answered);
    },
  };
}

/**
 * A real server (`createEmulator`, 127.0.0.1, port 0) driven with fetch: POST /run and GET
 * /status go through their fast entries whenever those take them, as for any client. Each request carries
 * a sequence number in a header, and the route table's `take` is watched, so every answer says
 * whether a fast entry gave it.
 */
export function socketTransport(): QueueTransport {
  const answered: QueueTransport["answered"] = [];
  return {
    name: "socket",
    socket: true,
    fastPath: true,
    answered,
    async start(options = {}) {
      const emu = await createEmulator({ port: 0, clock: "manual", ...options });
      const direct = (emu.app as unknown as App).table;
      const handle = direct.take.bind(direct);
      const takenBy = new Map<string, boolean>();
      direct.take = (req, res) => {
        const taken = handle(req, res);
        const seq = req.headers["x-test-seq"];
        if (typeof seq === "string") takenBy.set(seq, taken);
        return taken;
      };
      let seq = 0;
      const by = (n: string): AnsweredBy => {
        const taken = takenBy.get(n);
        takenBy.delete(n);
        if (taken === undefined) throw new Error(`request ${n} never reached the server's request handler`);
        return taken ? "direct" : "app";
      };
      const send = async (_method: string, path: string, init: RequestInit) => {
        const n = String(++seq);
        const res = await fetch(`${emu.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), "x-test-seq": n } });
        return { res, by: by(n) };
      };
      // fetch sends the bytes it declares: node's client can declare a length and send nothing.
      const declaredPost = (path: string, bytes: number) =>
        new Promise<{ res: Response; by: AnsweredBy }>((resolve, reject) => {
          const n = String(++seq);
          const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", "content-length": bytes, "x-test-seq": n };
          const req = httpRequest(`${emu.url}${path}`, { method: "POST", headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (d: Buffer) => chunks.push(d));
            res.on("end", () => {
              req.destroy();
              const h = new Headers();
              for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
              resolve({ res: new Response(Buffer.concat(chunks), { status: res.statusCode!, headers: h }), by: by(n) });
            });
          });
          req.on("error", reject);
          req.flushHeaders();
        });
      return client({ appFetch: undefined, url: emu.url }, send, declaredPost, (ms) => emu.clock.advance(ms), () => emu.close(), answered);
    },
  };
}
