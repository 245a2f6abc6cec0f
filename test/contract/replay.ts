import { createEmulator, type Emulator } from "../../src/index.js";
import type { ClockMode } from "../../src/domain/clock.js";
import { parse, type RecordedExchange, type Recording, type Shape } from "../support/recorder.js";

/**
 * Replays a recording (test/support/recorder.ts) against a fresh minipod with the recorded config
 * and clock: each request as the client sent it, with the ids minipod gives now in place of the
 * recorded ones ({id:N}), each sent once the requests it followed were answered (a request the
 * client sent while others were open, such as a /run while a job-take poll is held, is sent
 * without waiting for them); and each answer checked against what the client accepted: the same
 * status and media type, and every field it was given, of the same type. A GET whose answer
 * does not satisfy it yet (a job still running) is asked again, as the client polls, for a while.
 */

const KEY = "replay-key";
/** How long a polled GET is asked again before its answer counts as a failure. */
const POLL_MS = 15_000;
/** Bound of one request. */
const REQUEST_MS = 30_000;

export async function replay(r: Recording): Promise<void> {
  if (r.idle?.length) {
    // An idle worker's exchanges, on a minipod with nothing queued that answers empty polls at once.
    const config = r.config as { externalWorkers?: Record<string, unknown> };
    const emu = await createEmulator({ clock: r.clock as ClockMode, config: { ...config, externalWorkers: { ...config.externalWorkers, pollHoldMs: 0 } } as never });
    try {
      const ids = new Map<string, string>();
      for (const [i, x] of r.idle.entries()) await send(emu, x, ids, `idle[${i}]`);
    } finally {
      await emu.close();
    }
  }
  const emu = await createEmulator({ clock: r.clock as ClockMode, config: r.config as never });
  const ids = new Map<string, string>();
  const answered: Array<Promise<void>> = [];
  try {
    for (const [i, x] of r.exchanges.entries()) {
      const open = new Set(x.sentWhileOpen ?? []);
      for (let j = 0; j < i; j++) if (!open.has(j)) await answered[j];
      answered[i] = send(emu, x, ids, `exchanges[${i}]`);
      // Let it reach minipod before what follows is sent (it may be held open meanwhile).
      answered[i]!.catch(() => {});
      if (r.exchanges[i + 1]?.sentWhileOpen?.includes(i)) await new Promise((res) => setTimeout(res, 25));
    }
    await Promise.all(answered);
  } finally {
    await emu.close();
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

function fillAll(v: unknown, ids: Map<string, string>, where: string): unknown {
  if (typeof v === "string") return fill(v, ids, where);
  if (Array.isArray(v)) return v.map((x) => fillAll(x, ids, where));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillAll(x, ids, where)]));
  return v;
}

async function send(emu: Emulator, x: RecordedExchange, ids: Map<string, string>, at: string): Promise<void> {
  const where = `${at} ${x.request.method} ${x.request.path}`;
  const deadline = Date.now() + POLL_MS;
  for (;;) {
    const url = new URL(fill(x.request.path, ids, where), emu.url);
    for (const [k, v] of Object.entries(x.request.query ?? {})) url.searchParams.set(k, v === "string" ? "x" : fill(v, ids, where));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(x.request.headers ?? {})) headers[k] = v.replace("{key}", KEY);
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
    if (x.request.method !== "GET" || Date.now() > deadline) throw new Error(`${where}: minipod's answer no longer satisfies what the client accepted:\n  ${problems.join("\n  ")}\nanswer: ${text.slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const typeOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** What of `shape` the value `v` lacks (empty when it satisfies it), ids bound as met. */
export function satisfies(shape: Shape, v: unknown, ids: Map<string, string>, at: string): string[] {
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
    return shape.slice(0, v.length).flatMap((s, i) => satisfies(s, v[i], ids, `${at}[${i}]`));
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) return [`${at}: ${typeOf(v)} where the client was given an object`];
  const o = v as Record<string, unknown>;
  return Object.entries(shape).flatMap(([k, s]) => (k in o ? satisfies(s, o[k], ids, `${at}.${k}`) : [`${at}.${k}: missing (the client was given it, as ${JSON.stringify(s).slice(0, 60)})`]));
}
