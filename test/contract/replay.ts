import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createEmulator, type Emulator } from "../../src/index.js";
import type { ClockMode } from "../../src/domain/clock.js";
import { BUILTIN_IMAGES } from "../../src/domain/images.js";
import { HELD, parse, placeholders, type RecordedExchange, type RecordedWorkerExchange, type Recording, type Shape } from "../support/recording.js";

/**
 * Replays a recording (test/support/recorder.ts) against a fresh minipod with the recorded config
 * and clock: each request as the client sent it, with the ids minipod gives now in place of the
 * recorded ones ({id:N}), in the recorded order, each once the one before was answered, except
 * long polls (job-take, job-stop, status-sync, runsync, stream), which are sent and left open as
 * the client leaves them (a /run follows a held job-take); and each answer checked against what
 * the client accepted: the same status and media type, and every field it was given, of the same
 * type. A GET whose answer does not satisfy it yet (a job still running) is asked again, as the
 * client polls, for a while. The test's own control calls (`control`: moving the clock) are sent
 * once the client's long polls left open wait on minipod, and a request waiting for one of them
 * to give its job (a status-sync after a runsync) does not hold them up.
 */

/** The key sent: the first of the recorded config's keys, else any. */
const keyOf = (config: unknown) => (config as { auth?: { keys?: Array<{ key: string }> } }).auth?.keys?.[0]?.key ?? "replay-key";
/** How long a polled GET is asked again before its answer counts as a failure. */
const POLL_MS = 20_000;
/** How long minipod holds an empty worker poll in a replay: the replay polls again, as the worker does. */
const HOLD_MS = 1000;
/**
 * The images whose endpoints get worker processes (the recorded config's and minipod's own), each
 * with a command that ends at once: the replay is their worker, and their endpoints stay as they
 * were recorded (external).
 */
const noProcesses = (images: Array<{ image: string }> = []) => [...images, ...BUILTIN_IMAGES.map((b) => ({ image: b.image }))].map((i) => ({ ...i, command: [process.execPath, "-e", "0"] }));
/** Bound of one request. */
const REQUEST_MS = 30_000;

export async function replay(recording: Recording): Promise<void> {
  // A worker HTTP server of the test's (`{worker}` in the config): a stand-in answering as it did.
  const worker = JSON.stringify(recording.config).includes('"{worker}"') ? await standInWorker(recording.worker ?? []) : undefined;
  try {
    const r = worker ? { ...recording, config: JSON.parse(JSON.stringify(recording.config).split('"{worker}"').join(JSON.stringify(worker.url))) as unknown } : recording;
    await replayOn(r);
    const unmet = worker?.unmet() ?? [];
    if (unmet.length) throw new Error(`minipod never relayed to the worker what it relayed when recorded: ${unmet.join(", ")}`);
  } finally {
    await worker?.close();
  }
}

/**
 * A worker HTTP server on 127.0.0.1 answering each request minipod relays with the recorded answer
 * to the same method, path and query; another request is answered 404, naming it (so the client's
 * answer is not what it accepted).
 */
async function standInWorker(list: RecordedWorkerExchange[]): Promise<{ url: string; unmet: () => string[]; close: () => Promise<void> }> {
  const met = new Set<RecordedWorkerExchange>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const query = JSON.stringify(Object.fromEntries([...url.searchParams.entries()].sort()));
    const x = list.find((w) => w.request.method === req.method && w.request.path === url.pathname && JSON.stringify(w.request.query ?? {}) === query);
    req.resume();
    req.on("end", () => {
      if (!x) return void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: `the recording has no worker answer to ${req.method} ${req.url}` }));
      met.add(x);
      const body = x.response.body;
      res.writeHead(x.response.status, x.response.headers ?? {}).end(body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    unmet: () => list.filter((w) => !met.has(w)).map((w) => `${w.request.method} ${w.request.path}`),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function replayOn(r: Recording): Promise<void> {
  if (r.idle?.length) {
    // An idle worker's exchanges, on a minipod with nothing queued that answers empty polls at once.
    const config = r.config as { externalWorkers?: Record<string, unknown> };
    const emu = await createEmulator({ clock: r.clock as ClockMode, config: { ...config, externalWorkers: { ...config.externalWorkers, pollHoldMs: 0 } } as never });
    try {
      const ids = new Map<string, string>();
      for (const [i, x] of r.idle.entries()) await send(emu, keyOf(r.config), x, ids, `idle[${i}]`);
    } finally {
      await emu.close();
    }
  }
  const config = r.config as { externalWorkers?: Record<string, unknown>; images?: Array<{ image: string }> };
  const emu = await createEmulator({
    clock: r.clock as ClockMode,
    // The recording holds the workers' side: an endpoint of an image that is a command (runpod-flash's, the SDK 2.x's) starts none.
    config: { ...config, externalWorkers: { ...config.externalWorkers, pollHoldMs: HOLD_MS }, images: noProcesses(config.images) } as never,
    log: () => {},
  });
  const ids = new Map<string, string>();
  const key = keyOf(r.config);
  // Requests left open while the client goes on (long polls), until answered.
  const open: Open[] = [];
  // Requests waiting for a long poll left open to give the ids they name, each sent once it has.
  let deferred: Deferred[] = [];
  const dispatch = async (x: RecordedExchange, i: number, uses: Set<string>): Promise<void> => {
    const done = send(emu, key, x, ids, `exchanges[${i}]`);
    if (HELD.test(x.request.path) || x.request.query?.wait !== undefined) {
      const given = new Set(placeholders(x.response.body));
      const o: Open = { done, introduces: new Set([...given].filter((p) => !uses.has(p))), take: /\/job-take(-batch)?\//.test(x.request.path), client: !WORKER.test(x.request.path), settled: false };
      done.then(() => (o.settled = true), () => (o.settled = true));
      open.push(o);
      // Let it reach minipod before what follows is sent.
      await new Promise((res) => setTimeout(res, 25));
    } else await done;
  };
  try {
    for (const [i, x] of r.exchanges.entries()) {
      // The test's own control call (moving the clock) goes while the client's long polls are open,
      // once they wait; another request waits for those that were waiting for ids, as sent in turn.
      if (x.control) await untilWaiting(emu, key, open, deferred);
      else {
        await Promise.all(deferred.map((d) => d.done));
        deferred = [];
      }
      // A worker's request naming a job waits for the poll of its that took the job (a job-done
      // after its job-take). Another request (the client's status-sync of that job, which may come
      // before what lets the worker take it, as the removal of a fault; or of the job its runsync
      // left running, while the test moves the clock) waits only until the ids it names are given,
      // and the test's control calls that follow it are not held up meanwhile.
      const uses = new Set(placeholders(x.request));
      const worker = WORKER.test(x.request.path);
      for (const o of open) if (worker && o.take && [...o.introduces].some((p) => uses.has(p))) await o.done;
      const givers = open.filter((o) => !(worker && o.take) && [...o.introduces].some((p) => uses.has(p) && !ids.has(p)));
      if (givers.length === 0) {
        await dispatch(x, i, uses);
        continue;
      }
      const d: Deferred = { ready: false, dispatched: false, done: Promise.resolve() };
      d.done = Promise.all(givers.map((o) => o.done)).then(async () => {
        d.ready = true;
        await dispatch(x, i, uses);
        d.dispatched = true;
      });
      d.done.catch(() => {});
      deferred.push(d);
    }
    await Promise.all(deferred.map((d) => d.done));
    await Promise.all(open.map((o) => o.done));
  } finally {
    await emu.close();
  }
}

/** The worker protocol's requests. */
const WORKER = /^\/v2\/[^/]+\/(job-take|job-take-batch|job-done|job-stream|job-stop|ping)\//;

/** A long poll left open: what its answer gives, and whether it is the client's (not a worker's). */
interface Open {
  done: Promise<void>;
  introduces: Set<string>;
  take: boolean;
  client: boolean;
  settled: boolean;
}

/** A request waiting for a long poll to give the ids it names: `ready` once given, `dispatched` once sent. */
interface Deferred {
  ready: boolean;
  dispatched: boolean;
  done: Promise<void>;
}

/** How long a control step waits for the client's long polls to be waiting on minipod. */
const WAITING_MS = 5000;

/**
 * Before a control step: each request whose ids were given has been sent, and each of the client's
 * long polls left open waits on minipod's virtual time (the clock's `waiting`), as when the test
 * moved the clock under it; after WAITING_MS the step goes anyway (its answers are checked).
 */
async function untilWaiting(emu: Emulator, key: string, open: Open[], deferred: Deferred[]): Promise<void> {
  const until = Date.now() + WAITING_MS;
  while (Date.now() < until) {
    if (!deferred.some((d) => d.ready && !d.dispatched)) {
      const inFlight = open.filter((o) => o.client && !o.settled).length;
      if (inFlight === 0) return;
      const clock = (await (await fetch(new URL("/_emulator/clock", emu.url), { headers: { authorization: key } })).json()) as { waiting?: number };
      if ((clock.waiting ?? 0) >= inFlight) return;
    }
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** `s` with every {id:N} replaced by the id minipod gave in its place. */
function fill(s: string, ids: Map<string, string>, where: string): string {
  return s.replace(/\{id:\d+\}/g, (name) => {
    const id = ids.get(name);
    if (id === undefined) throw new Error(`${where}: the recording's ${name} was never given by minipod in this replay`);
    return id;
  });
}

/** A value of a recorded shape (a worker's output): each type by a value of it. */
function materialize(shape: Shape, ids: Map<string, string>, where: string): unknown {
  if (Array.isArray(shape)) return shape.map((x) => materialize(x, ids, where));
  if (typeof shape === "object") return Object.fromEntries(Object.entries(shape).map(([k, x]) => [k, materialize(x, ids, where)]));
  const type = shape.split("|")[0]!;
  return ({ number: 1, string: "s", boolean: true, null: null } as Record<string, unknown>)[type] ?? fill(type, ids, where);
}

function fillAll(v: unknown, ids: Map<string, string>, where: string): unknown {
  if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 1 && "$shape" in v) return materialize((v as { $shape: Shape }).$shape, ids, where);
  if (typeof v === "string") return fill(v, ids, where);
  if (Array.isArray(v)) return v.map((x) => fillAll(x, ids, where));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillAll(x, ids, where)]));
  return v;
}

async function send(emu: Emulator, key: string, x: RecordedExchange, ids: Map<string, string>, at: string): Promise<void> {
  const where = `${at} ${x.request.method} ${x.request.path}`;
  const deadline = Date.now() + POLL_MS;
  let first: string | undefined;
  for (;;) {
    const url = new URL(fill(x.request.path, ids, where), emu.url);
    for (const [k, v] of Object.entries(x.request.query ?? {})) url.searchParams.set(k, fill(v, ids, where));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(x.request.headers ?? {})) headers[k] = v.replace("{key}", key);
    const body = x.request.body === undefined ? undefined : typeof x.request.body === "string" ? fill(x.request.body, ids, where) : JSON.stringify(fillAll(x.request.body, ids, where));
    const res = await fetch(url, { method: x.request.method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(REQUEST_MS) });
    const text = await res.text();
    const type = res.headers.get("content-type") ?? undefined;
    const bound = new Map(ids);
    const problems: string[] = [];
    if (res.status !== x.response.status) problems.push(`status ${res.status}, recorded ${x.response.status}`);
    const media = type?.split(";")[0]!.trim().toLowerCase();
    if (x.response.contentType && media !== x.response.contentType) problems.push(`content type ${media ?? "none"}, recorded ${x.response.contentType}`);
    if (x.response.body !== undefined) problems.push(...satisfies(x.response.body, parse(text, type), bound, "body"));
    if (problems.length === 0) {
      for (const [k, v] of bound) ids.set(k, v);
      return;
    }
    // The first answer is the one to show (a poll asked again may find the job taken by then).
    first ??= `${problems.join("\n  ")}\nanswer: ${text.slice(0, 2000)}`;
    if (x.request.method !== "GET" || Date.now() > deadline) throw new Error(`${where}: minipod's answer no longer satisfies what the client accepted:\n  ${first}${first.endsWith(text.slice(0, 2000)) ? "" : `\nlast answer (asked again for ${POLL_MS / 1000} s): ${res.status} ${text.slice(0, 500)}`}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** What of `shape` the value `v` lacks (empty when it satisfies it), ids bound as met. */
function satisfies(shape: Shape, v: unknown, ids: Map<string, string>, at: string): string[] {
  if (typeof shape === "string") {
    const alternatives = shape.split("|");
    for (const alt of alternatives) {
      if (/^\{id:\d+\}$/.test(alt)) {
        if (typeof v !== "string") continue;
        const bound = ids.get(alt);
        if (bound !== undefined && bound !== v) continue;
        ids.set(alt, v);
        return [];
      }
      if (alt === typeOf(v)) return [];
    }
    return [`${at}: ${JSON.stringify(v)?.slice(0, 80) ?? "nothing"} where the client was given ${shape}`];
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(v)) return [`${at}: ${typeOf(v)} where the client was given a list`];
    if (shape.length && !v.length) return [`${at}: an empty list where the client was given items`];
    // Each kind of item the client was given must be among the items (each item meets one kind).
    const used = new Set<number>();
    return shape.flatMap((s, i) => {
      let first: string[] | undefined;
      for (const [j, item] of v.entries()) {
        if (used.has(j)) continue;
        const trial = new Map(ids);
        const problems = satisfies(s, item, trial, `${at}[${j}]`);
        if (!problems.length) {
          used.add(j);
          for (const [k, x] of trial) ids.set(k, x);
          return [];
        }
        first ??= problems;
      }
      return first ?? [`${at}: no item for the kind of item [${i}] the client was given`];
    });
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) return [`${at}: ${typeOf(v)} where the client was given an object`];
  const o = v as Record<string, unknown>;
  return Object.entries(shape).flatMap(([k, s]) => (k in o ? satisfies(s, o[k], ids, `${at}.${k}`) : [`${at}.${k}: missing (the client was given it, as ${JSON.stringify(s).slice(0, 60)})`]));
}
