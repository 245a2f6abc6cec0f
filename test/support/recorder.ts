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
 * were sent. test/contract/recorded.test.ts replays them against a fresh minipod in every run.
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
  /**
   * What minipod relayed to a load-balancing endpoint's worker (an HTTP server of the test's,
   * written `{worker}` in `config`) and what that worker answered: the replay's stand-in worker
   * answers so.
   */
  worker?: RecordedWorkerExchange[];
}

/** A request minipod relayed to a worker HTTP server, and the worker's answer as it was sent. */
export interface RecordedWorkerExchange {
  request: { method: string; path: string; query?: Record<string, string>; body?: unknown };
  response: { status: number; headers?: Record<string, string>; body?: unknown };
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
}

interface ScenarioOptions {
  /** The endpoints whose queue and worker requests belong to it (others are left out); default all. Other routes (control, GraphQL, REST) always do. */
  endpoints?: string[];
  about: string;
  /** Keep an idle worker's heartbeats and empty polls (once each), else they are left out. */
  idle?: boolean;
  /**
   * The client polls several GETs while it waits (runpod-flash: the job's status, the endpoint's
   * metrics, the worker's log), as often and in the order its timing gives: between two of its
   * other requests, each such GET (a stream's reads too) is kept once, where first sent, after the
   * worker's result (placed right after the take that brought its job), with what its answers gave
   * together, every list but a stream's as a list of anything (which workers are ready, which lines
   * are logged, depends on timing and on worker processes a replay has not).
   */
  polls?: boolean;
  /** The worker HTTP server whose requests from minipod, from its start to this scenario's end, belong to it (`worker`). */
  worker?: WorkerTap;
}

/** The worker protocol's requests: those of an idle worker are left out of scenarios that are not about idleness. */
const WORKER_OPS = /^\/v2\/[^/]+\/(job-take|job-take-batch|job-stop|ping)\//;
/** A worker request's path, the worker id in it. */
const WORKER_PATH = /^\/v2\/[^/]+\/(?:job-take|job-take-batch|job-stop|ping|job-done|job-stream)\/([^/]+)/;

export class Recorder {
  private server: Server | undefined;
  private readonly agent = new Agent({ keepAlive: true });
  private seq = 0;
  private current: { name: string; o: ScenarioOptions; raws: Raw[] } | undefined;
  private readonly scenarios: Array<{ name: string; o: ScenarioOptions; raws: Raw[] }> = [];
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
      const raw: Raw = { seq: this.seq++, method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, body: [], answer: [], done: false };
        // An exchange belongs to the scenario under way when it is answered: a poll held since
      // before (a job-take waiting for work) belongs to the scenario whose /run it was given.
      const settle = () => {
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
      });
    });
    this.server.keepAliveTimeout = 75_000;
    this.server.requestTimeout = 0;
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** From now on, what is sent belongs to scenario `name` (until the next call or `pause()`); a name used before goes on with it. */
  scenario(name: string, o: ScenarioOptions): void {
    this.current?.o.worker?.freeze();
    // The same name again goes on with the same scenario (after a pause).
    this.current = this.scenarios.find((x) => x.name === name) ?? { name, o, raws: [] };
    if (!this.scenarios.includes(this.current)) this.scenarios.push(this.current);
  }

  /** How many exchanges of the scenario under way were answered with `status` on a path matching `path`. */
  seen(path: RegExp, status: number): number {
    return this.current?.raws.filter((r) => path.test(r.path) && r.status === status).length ?? 0;
  }

  /** What is sent from now on belongs to no scenario. */
  pause(): void {
    this.current?.o.worker?.freeze();
    this.current = undefined;
  }

  /** Stops relaying and, when recording, writes each scenario's file. */
  async close(): Promise<void> {
    this.current?.o.worker?.freeze();
    this.current = undefined;
    relays.delete(this.target);
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.agent.destroy();
    mkdirSync(RECORDED_DIR, { recursive: true });
    for (const s of this.scenarios) {
      const keys = (this.meta.config as { auth?: { keys?: Array<{ key: string }> } }).auth?.keys?.map((k) => k.key);
      const recording = toRecording(s.raws, s.o, keys);
      const file: Recording = { client: this.meta.client, test: this.meta.test, scenario: s.name, about: s.o.about, clock: this.meta.clock, config: this.meta.config, ...recording };
      if (s.o.worker) file.worker = s.o.worker.exchanges();
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

/** A worker's answer headers that say nothing of it (the connection's, the time). */
const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding", "content-length"]);

/**
 * A relay in front of a worker HTTP server of the test's (a load-balancing endpoint's worker, given
 * to minipod by URL): minipod is given `url`, and when recording, each request minipod sends it and
 * the worker's answer are kept, until the scenario it belongs to (ScenarioOptions.worker) ends.
 * Without MINIPOD_RECORD, `url` is the worker's own.
 */
export class WorkerTap {
  private server: Server | undefined;
  private readonly raws: Raw[] = [];
  private frozen = false;
  private seq = 0;
  url: string;

  constructor(private readonly target: string) {
    this.url = target;
  }

  async start(): Promise<this> {
    if (!RECORDING) return this;
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      const raw: Raw = { seq: this.seq++, method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: {}, body: [], answer: [], done: false };
      const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } }, (answer) => {
        raw.status = answer.statusCode;
        raw.contentType = answer.headers["content-type"];
        raw.headers = answer.headers;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on("data", (d: Buffer) => {
          raw.answer.push(d);
          res.write(d);
        });
        answer.on("end", () => {
          raw.done = true;
          if (!this.frozen) this.raws.push(raw);
          res.end();
        });
      });
      up.on("error", () => res.destroy());
      req.on("data", (d: Buffer) => {
        raw.body.push(d);
        up.write(d);
      });
      req.on("end", () => up.end());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** What minipod sends the worker from now on belongs to no scenario. */
  freeze(): void {
    this.frozen = true;
  }

  /** The distinct requests minipod sent (a health check sent again is kept once), in the order first sent, with the worker's answers. */
  exchanges(): RecordedWorkerExchange[] {
    const out = new Map<string, RecordedWorkerExchange>();
    for (const r of [...this.raws].sort((a, b) => a.seq - b.seq)) {
      const request: RecordedWorkerExchange["request"] = { method: r.method, path: r.path };
      if ([...r.query.keys()].length) request.query = Object.fromEntries([...r.query.entries()].sort());
      if (r.body.length) request.body = values(parse(r.body, undefined));
      const key = JSON.stringify([request.method, request.path, request.query]);
      if (out.has(key)) continue;
      const headers = Object.fromEntries(
        Object.entries(r.headers)
          .filter(([k]) => !TRANSPORT_HEADERS.has(k))
          .map(([k, v]) => [k, String(v)])
          .sort(),
      );
      const response: RecordedWorkerExchange["response"] = { status: r.status ?? 0 };
      if (Object.keys(headers).length) response.headers = headers;
      const body = parse(r.answer, r.contentType);
      if (body !== undefined) response.body = values(body);
      out.set(key, { request, response });
    }
    return [...out.values()];
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

/** A tap in front of the worker HTTP server at `target`, started; a no-op one (url = target) unless recording. */
export async function workerTap(target: string): Promise<WorkerTap> {
  return new WorkerTap(target).start();
}

/** Whether an exchange is an idle worker's: a heartbeat, or a worker poll answered with nothing. */
function isIdle(r: Raw): boolean {
  return WORKER_OPS.test(r.path) && (r.path.includes("/ping/") || r.status === 204);
}

/** Query parameters whose values differ from one installation to the next: recorded as present ("string"). */
const VOLATILE_QUERY = new Set(["runpod_version"]);

function toRecording(raws: Raw[], o: ScenarioOptions, keys: string[] | undefined): { exchanges: RecordedExchange[]; idle?: RecordedExchange[] } {
  const done = raws.filter((r) => r.done).sort((a, b) => a.seq - b.seq);
  const ids = new Ids();
  // Ids are named in the order requests were sent: an answer names them, later requests use them.
  for (const r of done) {
    ids.learnWorker(r.path);
    // What a client sends before minipod gave it (a model's name, sent before the models are listed) is the client's own.
    ids.own(parse(r.body, r.headers["content-type"]));
    ids.own([...r.query.values()]);
    ids.learn(parse(r.answer, r.contentType));
  }
  const ordered = canonicalOrder(done.filter((r) => !isIdle(r)).map((r) => exchange(r, ids, keys)));
  if (o.polls) return { exchanges: mergePolls(ordered) };
  // A GET sent again once answered (a poll) is kept once, marked repeated, with what its answers
  // gave together: how many polls a client makes, and which of them see which state of a job,
  // depend on timing; the fields it was given in the end do not.
  const exchanges: RecordedExchange[] = [];
  for (const x of ordered) {
    // A stream read by a client while the test moves the clock: its polls, wherever they fell, are one.
    const stream = /\/stream\//.test(x.request.path) && x.request.method === "GET";
    const prev = stream ? exchanges.find((p) => p.request.method === "GET" && JSON.stringify(p.request) === JSON.stringify(x.request)) : exchanges[exchanges.length - 1];
    if (prev && x.request.method === "GET" && JSON.stringify(prev.request) === JSON.stringify(x.request) && prev.response.status === x.response.status) {
      prev.repeated = true;
      if (x.response.body !== undefined) prev.response.body = prev.response.body === undefined ? x.response.body : union(prev.response.body, x.response.body);
      continue;
    }
    exchanges.push(x);
  }
  if (!o.idle) return { exchanges };
  const idle = new Map<string, RecordedExchange>();
  for (const r of done.filter(isIdle)) {
    const x = exchange(r, ids, keys);
    idle.set(JSON.stringify(x), x);
  }
  return { exchanges, idle: [...idle.entries()].sort((a, b) => a[0].localeCompare(b[0])).map((e) => e[1]) };
}

/** A scenario's exchanges with its polls merged (ScenarioOptions.polls). */
function mergePolls(list: RecordedExchange[]): RecordedExchange[] {
  // A worker's result and stream chunks, right after the take that brought their job.
  const isTake = (x: RecordedExchange) => /\/job-take(-batch)?\//.test(x.request.path);
  const after = new Map<RecordedExchange, RecordedExchange[]>();
  for (const x of list) {
    if (!/\/job-(done|stream)\//.test(x.request.path)) continue;
    const names = placeholders(x.request.path);
    const take = list.find((y) => isTake(y) && placeholders(y.response.body).some((n) => names.includes(n)));
    if (take) after.set(take, [...(after.get(take) ?? []), x]);
  }
  const moved = new Set([...after.values()].flat());
  const out: RecordedExchange[] = [];
  let window = new Map<string, RecordedExchange>();
  for (const x of list.flatMap((y) => (moved.has(y) ? [] : [y, ...(after.get(y) ?? [])]))) {
    // A stream's reads too: which chunks each read got depends on timing; all of them together, not.
    const stream = /\/stream\//.test(x.request.path);
    if (x.request.method !== "GET" || (HELD.test(x.request.path) && !stream) || WORKER_PATH.test(x.request.path)) {
      window = new Map();
      out.push(x);
      continue;
    }
    if (x.response.body !== undefined && !stream) x.response.body = anyLists(x.response.body);
    const key = `${JSON.stringify(x.request)} ${x.response.status}`;
    const prev = window.get(key);
    if (!prev) {
      window.set(key, x);
      out.push(x);
    } else if (x.response.body !== undefined) prev.response.body = prev.response.body === undefined ? x.response.body : union(prev.response.body, x.response.body);
  }
  return out;
}

/** A shape with every list as a list of anything. */
function anyLists(shape: Shape): Shape {
  if (Array.isArray(shape)) return [];
  if (typeof shape === "object") return Object.fromEntries(Object.entries(shape).map(([k, x]) => [k, anyLists(x)]));
  return shape;
}

/** Requests answered when something happens (held open until then): long polls. */
export const HELD = /\/(job-take|job-take-batch|job-stop|status-sync|stream)\/|\/runsync$/;

/** The {id:N} names in a value. */
export function placeholders(v: unknown): string[] {
  return JSON.stringify(v ?? null).match(/\{id:\d+\}/g) ?? [];
}

/**
 * The order of a scenario's exchanges, made independent of timing: when a long poll was sent
 * against the moment another actor sent something (the worker's job-take before or after the
 * test's /run, the test's status-sync before or after the worker's job-done) is a race. So each
 * job-take and status-sync naming ids (in its path or its answer) is placed right after the last
 * request that brought one of them into being (a /run: an answer with the id, to a request
 * without it), and left where it was when there is none; other requests stay in the order sent.
 */
function canonicalOrder(list: RecordedExchange[]): RecordedExchange[] {
  const held = (x: RecordedExchange) => HELD.test(x.request.path);
  // Moved: the worker's job-take (it waits for a job) and the client's status-sync (it waits for the end).
  const moves = (x: RecordedExchange) => /\/(job-take|job-take-batch|status-sync)\//.test(x.request.path);
  const creates = (x: RecordedExchange, id: string) => !held(x) && placeholders(x.response.body).includes(id) && !placeholders(x.request).includes(id);
  const out: RecordedExchange[] = [];
  const after = new Map<RecordedExchange, RecordedExchange[]>();
  for (const x of list) {
    if (!moves(x)) continue;
    const names = new Set([...placeholders(x.request), ...placeholders(x.response.body)]);
    let anchor: RecordedExchange | undefined;
    for (const y of list) if ([...names].some((n) => creates(y, n))) anchor = y;
    if (anchor) after.set(anchor, [...(after.get(anchor) ?? []), x]);
  }
  // Polls moved after the same request: the worker's first, then the client's, whichever was sent first.
  const rank = (x: RecordedExchange) => ["job-take", "job-take-batch", "job-stop", "stream", "status-sync", "runsync"].findIndex((k) => x.request.path.includes(`/${k}/`));
  for (const [k, v] of after) after.set(k, [...v].sort((a, b) => rank(a) - rank(b)));
  const moved = new Set([...after.values()].flat());
  for (const x of list) {
    if (!moved.has(x)) out.push(x);
    out.push(...(after.get(x) ?? []));
  }
  return out;
}

function exchange(r: Raw, ids: Ids, keys: string[] | undefined): RecordedExchange {
  const request: RecordedRequest = { method: r.method, path: ids.abstract(r.path) as string };
  if ([...r.query.keys()].length) request.query = Object.fromEntries([...r.query.entries()].map(([k, v]) => [k, VOLATILE_QUERY.has(k) ? "string" : (ids.abstract(v) as string)]).sort());
  const headers: Record<string, string> = {};
  const auth = r.headers.authorization;
  // A key the config accepts is recorded as {key}; another (a client given a wrong key) as sent.
  if (typeof auth === "string") headers.authorization = keys && !keys.includes(auth.replace(/^bearer /i, "")) ? auth : /^bearer /i.test(auth) ? "Bearer {key}" : "{key}";
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
  private readonly workers = new Map<string, string>();
  private readonly owned = new Set<string>();

  learn(v: unknown, key?: string): void {
    if (typeof v === "string" && (key === "id" || key === "jobsToStop" || key === "requestId") && v.length >= 6 && !this.names.has(v) && !this.owned.has(v)) this.names.set(v, `{id:${this.names.size + 1}}`);
    else if (Array.isArray(v)) for (const x of v) this.learn(x, key === "jobsToStop" ? key : undefined);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) this.learn(x, k);
  }

  /** Every string in `v` a value of the client's own, never named. */
  own(v: unknown): void {
    if (typeof v === "string" && !this.names.has(v)) this.owned.add(v);
    else if (Array.isArray(v)) for (const x of v) this.own(x);
    else if (v && typeof v === "object") for (const x of Object.values(v)) this.own(x);
  }

  name(s: string): string | undefined {
    return this.names.get(s);
  }

  /**
   * A worker id minipod made up (14 lowercase letters and digits, for the processes it starts),
   * seen in a worker request's path: named `worker-N` in the order first seen, sent so in a replay.
   * The ids a test gives its workers stay as they are.
   */
  learnWorker(path: string): void {
    const id = WORKER_PATH.exec(path)?.[1];
    if (id && /^[0-9a-z]{14}$/.test(id) && !this.workers.has(id)) this.workers.set(id, `worker-${this.workers.size + 1}`);
  }

  /** `v` with every id minipod gave replaced by its name (in strings: paths, values). */
  abstract(v: unknown): unknown {
    if (typeof v === "string") {
      let out = v;
      for (const [id, name] of [...this.names, ...this.workers]) if (out.includes(id)) out = out.split(id).join(name);
      return out;
    }
    if (Array.isArray(v)) return v.map((x) => this.abstract(x));
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.abstract(x)]));
    return v;
  }
}

/**
 * A request body's values, with what differs from run to run made constant: very long text,
 * times, a worker's error report (a traceback); a worker's output, opaque to minipod, by its shape
 * (`{"$shape": ...}`, which the replay fills with values of those types).
 */
function values(v: unknown, key?: string): unknown {
  if (key === "output") return { $shape: shapeOf(v, new Ids()) };
  // runpod-flash names a class's instance with a random suffix.
  if (key === "instance_id" && typeof v === "string") return v.replace(/_[0-9a-f]{8}$/, "_{random}");
  if (typeof v === "string") {
    if (v.length > 10_000) return "[text of more than 10000 characters]";
    if (key === "error" && v.length > 200) return "[a worker's error report]";
    return v.replace(/http:\/\/127\.0\.0\.1:\d+/g, "http://127.0.0.1:{port}").replace(/^\/tmp\/.*/, "{a temporary file}");
  }
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) < 1e9 ? v : 1.5;
  if (Array.isArray(v)) return v.map((x) => values(x));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, values(x, k)]));
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
