import { mkdirSync, writeFileSync } from "node:fs";
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The recorder of real clients' exchanges with minipod (`npm run contracts:record`, which sets
 * MINIPOD_RECORD=1). It sits at minipod's door, in the test harness, as a small HTTP relay: a test
 * points its real client (and its own requests) at `url`, the relay passes every request on to
 * minipod unchanged and its answer back unchanged, and keeps what each side sent. The clients are
 * not touched. At `close()` each scenario is written to test/contract/recorded/<scenario>.json:
 * the requests (method, path and query with ids abstracted, the headers that matter, the body), and
 * what was answered (status, content type, the answer's fields and their types), in the order they
 * were sent, each with the requests it was sent while they were still open (a long poll held over a
 * /run). test/contract/recorded.test.ts replays them against a fresh minipod in every run.
 *
 * Without MINIPOD_RECORD nothing is relayed: `url` is minipod's own.
 */

export const RECORDED_DIR = fileURLToPath(new URL("../contract/recorded/", import.meta.url));
export const RECORDING = process.env.MINIPOD_RECORD === "1";

/** A value's shape: a type name, an id placeholder (`{id:N}`), or objects and arrays of shapes. */
export type Shape = string | Shape[] | { [key: string]: Shape };

export interface RecordedRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** The JSON body as sent, ids abstracted; a string when it was not JSON. */
  body?: unknown;
}

export interface RecordedAnswer {
  status: number;
  /** The media type, when there was a body. */
  contentType?: string;
  /** The answer's shape: every field the client was given, with its type. */
  body?: Shape;
}

export interface RecordedExchange {
  request: RecordedRequest;
  response: RecordedAnswer;
  /** Earlier exchanges (by index) still open when this one was sent; every other earlier one had been answered. */
  sentWhileOpen?: number[];
  /** The client sent the same request again (polling) and was given the same shape. */
  repeated?: true;
}

export interface Recording {
  /** The real client, and what of it the scenario drives. */
  client: string;
  /** The test file whose run recorded it. */
  test: string;
  scenario: string;
  /** What it shows. */
  about: string;
  /** minipod's config and clock in the test: the replay starts a fresh minipod with them. */
  clock: string;
  config: unknown;
  exchanges: RecordedExchange[];
  /** Exchanges of an idle worker (heartbeats, empty polls answered 204): replayed on a minipod with nothing queued. */
  idle?: RecordedExchange[];
}

interface Raw {
  seq: number;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer[];
  status?: number;
  contentType?: string;
  answer: Buffer[];
  done: boolean;
  open: Raw[];
}

interface ScenarioOptions {
  /** The endpoints whose queue and worker requests belong to it (others are left out); default all. Other routes (control, GraphQL, REST) always do. */
  endpoints?: string[];
  about: string;
  /** Keep an idle worker's heartbeats and empty polls (once each), else they are left out. */
  idle?: boolean;
}

/** The worker protocol's requests: those of an idle worker are left out of scenarios that are not about idleness. */
const WORKER_OPS = /^\/v2\/[^/]+\/(job-take|job-take-batch|job-stop|ping)\//;

export class Recorder {
  private server: Server | undefined;
  private readonly agent = new Agent({ keepAlive: true });
  private seq = 0;
  private current: { name: string; o: ScenarioOptions; raws: Raw[] } | undefined;
  private readonly scenarios: Array<{ name: string; o: ScenarioOptions; raws: Raw[] }> = [];
  private readonly open = new Set<Raw>();
  url: string;

  constructor(
    private readonly target: string,
    private readonly meta: { client: string; test: string; clock: string; config: unknown },
  ) {
    this.url = target;
  }

  async start(): Promise<this> {
    if (!RECORDING) return this;
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const raw: Raw = { seq: this.seq++, method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body: [], answer: [], done: false, open: [...this.open] };
      this.open.add(raw);
      // An exchange belongs to the scenario under way when it is answered: a poll held since
      // before (a job-take waiting for work) belongs to the scenario whose /run it was given.
      const settle = () => {
        this.open.delete(raw);
        const scenario = this.current;
        const endpoint = /^\/v2\/([^/]+)\//.exec(raw.path)?.[1];
        if (raw.done && scenario && (!scenario.o.endpoints || endpoint === undefined || scenario.o.endpoints.includes(endpoint))) scenario.raws.push(raw);
      };
      const up = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent: this.agent },
        (answer) => {
          raw.status = answer.statusCode;
          raw.contentType = answer.headers["content-type"];
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on("data", (d: Buffer) => {
            raw.answer.push(d);
            res.write(d);
          });
          answer.on("end", () => {
            raw.done = true;
            settle();
            res.end();
          });
          answer.on("error", () => res.destroy());
        },
      );
      up.on("error", () => res.destroy());
      req.on("data", (d: Buffer) => {
        raw.body.push(d);
        up.write(d);
      });
      req.on("end", () => up.end());
      res.on("close", () => {
        if (!res.writableFinished) up.destroy();
        if (!raw.done) this.open.delete(raw);
      });
    });
    this.server.keepAliveTimeout = 75_000;
    this.server.requestTimeout = 0;
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** From now on, what is sent belongs to scenario `name` (until the next call or `pause()`). */
  scenario(name: string, o: ScenarioOptions): void {
    this.current = { name, o, raws: [] };
    this.scenarios.push(this.current);
  }

  /** What is sent from now on belongs to no scenario. */
  pause(): void {
    this.current = undefined;
  }

  /** Stops relaying and, when recording, writes each scenario's file. */
  async close(): Promise<void> {
    this.current = undefined;
    relays.delete(this.target);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.agent.destroy();
    mkdirSync(RECORDED_DIR, { recursive: true });
    for (const s of this.scenarios) {
      const recording = toRecording(s.raws, s.o);
      const file: Recording = { client: this.meta.client, test: this.meta.test, scenario: s.name, about: s.o.about, clock: this.meta.clock, config: this.meta.config, ...recording };
      writeFileSync(join(RECORDED_DIR, `${s.name}.json`), JSON.stringify(file, null, 2) + "\n");
    }
  }
}

const relays = new Map<string, string>();

/** A recorder relaying to `target` (minipod's URL), started; a no-op one (url = target) unless recording. */
export async function recorder(target: string, meta: { client: string; test: string; clock: string; config: unknown }): Promise<Recorder> {
  const r = await new Recorder(target, meta).start();
  relays.set(target, r.url);
  return r;
}

/** The URL to reach minipod at `url` by: its recorder's while one relays to it, else itself. */
export function via(url: string): string {
  return relays.get(url) ?? url;
}

/** Whether an exchange is an idle worker's: a heartbeat, or a worker poll answered with nothing. */
function isIdle(r: Raw): boolean {
  return WORKER_OPS.test(r.path) && (r.path.includes("/ping/") || r.status === 204);
}

/** Query parameters whose values are kept; the others are recorded as present. */
const KEPT_QUERY = new Set(["gpu", "isStream", "batch_size", "job_in_progress", "pool", "wait", "timeout"]);

function toRecording(raws: Raw[], o: ScenarioOptions): { exchanges: RecordedExchange[]; idle?: RecordedExchange[] } {
  const done = raws.filter((r) => r.done).sort((a, b) => a.seq - b.seq);
  const ids = new Ids();
  // Ids are named in the order requests were sent: an answer names them, later requests use them.
  for (const r of done) ids.learn(parse(r.answer, r.contentType));
  const main = done.filter((r) => !isIdle(r));
  const items = main.map((r) => ({ r, x: exchange(r, ids) }));
  // A GET sent again once answered (a poll) is kept once, marked repeated, with what its
  // answers gave together: how many polls a client makes, and which of them see which state of a
  // job, depend on timing; the fields it was given in the end do not.
  const kept: typeof items = [];
  const alias = new Map<Raw, Raw>();
  for (const it of items) {
    const prev = kept[kept.length - 1];
    if (prev && it.r.method === "GET" && !it.r.open.includes(prev.r) && JSON.stringify(prev.x.request) === JSON.stringify(it.x.request) && prev.x.response.status === it.x.response.status) {
      prev.x.repeated = true;
      if (it.x.response.body !== undefined) prev.x.response.body = prev.x.response.body === undefined ? it.x.response.body : union(prev.x.response.body, it.x.response.body);
      alias.set(it.r, prev.r);
      continue;
    }
    kept.push(it);
  }
  const index = new Map(kept.map((k, i) => [k.r, i]));
  const exchanges = kept.map(({ r, x }) => {
    const open = [...new Set(r.open.map((o) => alias.get(o) ?? o).filter((o) => index.has(o) && o !== r).map((o) => index.get(o)!))].sort((a, b) => a - b);
    return open.length ? { ...x, sentWhileOpen: open } : x;
  });
  if (!o.idle) return { exchanges };
  const idle = new Map<string, RecordedExchange>();
  for (const r of done.filter(isIdle)) {
    const x = exchange(r, ids);
    idle.set(JSON.stringify(x), x);
  }
  return { exchanges, idle: [...idle.entries()].sort((a, b) => a[0].localeCompare(b[0])).map((e) => e[1]) };
}

function exchange(r: Raw, ids: Ids): RecordedExchange {
  const request: RecordedRequest = { method: r.method, path: ids.abstract(r.path) as string };
  if ([...r.query.keys()].length) request.query = Object.fromEntries([...r.query.entries()].map(([k, v]) => [k, KEPT_QUERY.has(k) ? (ids.abstract(v) as string) : "string"]).sort());
  const headers: Record<string, string> = {};
  const auth = r.headers.authorization;
  if (typeof auth === "string") headers.authorization = /^bearer /i.test(auth) ? "Bearer {key}" : "{key}";
  const ct = r.headers["content-type"];
  if (ct && r.body.length) headers["content-type"] = mediaType(ct);
  if (typeof r.headers.accept === "string" && r.headers.accept !== "*/*") headers.accept = r.headers.accept;
  if (Object.keys(headers).length) request.headers = headers;
  if (r.body.length) request.body = ids.abstract(values(parse(r.body, ct)));
  const response: RecordedAnswer = { status: r.status ?? 0 };
  const answer = parse(r.answer, r.contentType);
  if (r.contentType && Buffer.concat(r.answer).length) response.contentType = mediaType(r.contentType);
  if (answer !== undefined) response.body = shapeOf(answer, ids);
  return { request, response };
}

const mediaType = (ct: string) => ct.split(";")[0]!.trim().toLowerCase();

/** A body as JSON (Server-Sent Events as the list of their data), else as text; undefined when empty. */
export function parse(chunks: Buffer[] | string, contentType: string | undefined): unknown {
  const text = typeof chunks === "string" ? chunks : Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  if (contentType?.startsWith("text/event-stream")) {
    return text
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => {
        const data = l.slice(5).trim();
        try {
          return JSON.parse(data) as unknown;
        } catch {
          return data;
        }
      });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text.length > 200 ? `[text of ${text.length} characters]` : text;
  }
}

/** The job, request and batch ids minipod gave, named {id:1}, {id:2}... in the order they were first seen. */
class Ids {
  private readonly names = new Map<string, string>();

  learn(v: unknown, key?: string): void {
    if (typeof v === "string" && (key === "id" || key === "jobsToStop" || key === "requestId") && v.length >= 6 && !this.names.has(v)) this.names.set(v, `{id:${this.names.size + 1}}`);
    else if (Array.isArray(v)) for (const x of v) this.learn(x, key === "jobsToStop" ? key : undefined);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) this.learn(x, k);
  }

  name(s: string): string | undefined {
    return this.names.get(s);
  }

  /** `v` with every id minipod gave replaced by its name (in strings: paths, values). */
  abstract(v: unknown): unknown {
    if (typeof v === "string") {
      let out = v;
      for (const [id, name] of this.names) if (out.includes(id)) out = out.split(id).join(name);
      return out;
    }
    if (Array.isArray(v)) return v.map((x) => this.abstract(x));
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.abstract(x)]));
    return v;
  }
}

/** A request body's values, with what differs from run to run made constant: long text, times. */
function values(v: unknown): unknown {
  if (typeof v === "string") return v.length > 200 ? `[text of ${v.length > 10_000 ? "more than 10000" : "200 to 10000"} characters]` : v.replace(/http:\/\/127\.0\.0\.1:\d+/g, "http://127.0.0.1:{port}");
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) < 1e9 ? v : 1.5;
  if (Array.isArray(v)) return v.map(values);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, values(x)]));
  return v;
}

/** Two answers' shapes together: every field either gave; a value given as two types, as both (`string|null`). */
function union(a: Shape, b: Shape): Shape {
  if (JSON.stringify(a) === JSON.stringify(b)) return a;
  if (Array.isArray(a) && Array.isArray(b)) return dedupe([...a, ...b]);
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, Shape> = {};
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) out[k] = k in a && k in b ? union(a[k]!, b[k]!) : (a[k] ?? b[k])!;
    return out;
  }
  if (typeof a === "string" && typeof b === "string") return [...new Set([...a.split("|"), ...b.split("|")])].sort().join("|");
  return b;
}

/** A list of shapes without repeats (ten chunks of one shape are recorded as one). */
function dedupe(list: Shape[]): Shape[] {
  const seen = new Set<string>();
  return list.filter((x) => {
    const key = JSON.stringify(x);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What an answer gave: each field with its type, ids named. */
function shapeOf(v: unknown, ids: Ids): Shape {
  if (v === null) return "null";
  if (typeof v === "string") return ids.name(v) ?? "string";
  if (typeof v !== "object") return typeof v;
  if (Array.isArray(v)) return dedupe(v.map((x) => shapeOf(x, ids)));
  return Object.fromEntries(
    Object.entries(v)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, x]) => [k, shapeOf(x, ids)]),
  );
}
