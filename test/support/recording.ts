import type { IncomingHttpHeaders } from "node:http";
import { fileURLToPath } from "node:url";

/**
 * What a recording of a real client's exchanges with minipod holds (test/contract/recorded/*.json),
 * and how what was sent and answered becomes it: ids named, answers as shapes, bodies with what
 * differs from run to run made constant. Written by the recorder (recorder.ts), read by the replay
 * (test/contract/replay.ts).
 */


export const RECORDED_DIR = fileURLToPath(new URL("../contract/recorded/", import.meta.url));
/** Whether this run records (`npm run contracts:record` sets MINIPOD_RECORD=1). */
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
  /**
   * The test's own call to minipod's control API (`/_emulator/...`: moving the clock, a fault), not
   * the client's. The replay sends it once every long poll it left open is waiting on minipod: a
   * runsync held while the test moves the clock is answered by that move, as it was recorded.
   */
  control?: true;
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

export interface Raw {
  seq: number;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer[];
  status?: number;
  contentType?: string;
  answerHeaders?: IncomingHttpHeaders;
  answer: Buffer[];
  done: boolean;
}

/** A worker request's path, the worker id in it. */
export const WORKER_PATH = /^\/v2\/[^/]+\/(?:job-take|job-take-batch|job-stop|ping|job-done|job-stream)\/([^/]+)/;

/** Requests answered when something happens (held open until then): long polls. */
export const HELD = /\/(job-take|job-take-batch|job-stop|status-sync|stream)\/|\/runsync$/;

/** The {id:N} names in a value. */
export function placeholders(v: unknown): string[] {
  return JSON.stringify(v ?? null).match(/\{id:\d+\}/g) ?? [];
}

export const mediaType = (ct: string) => ct.split(";")[0]!.trim().toLowerCase();

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
export class Ids {
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
export function values(v: unknown, key?: string): unknown {
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
export function union(a: Shape, b: Shape): Shape {
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
export function shapeOf(v: unknown, ids: Ids): Shape {
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
