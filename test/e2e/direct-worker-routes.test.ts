import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildEmulator, type Emulator } from "../../src/compose/emulator.js";
import type { JournalEntry } from "../../src/domain/observability.js";
import { lastEntry, send as sendWith, sentTwiceEmulator, type Got } from "../support/raw-http.js";
import { WORKER_ERROR_DELAY_MS, WORKER_POLL_HOLD_DEFAULT_MS as POLL_HOLD_MS } from "../../src/domain/limits.js";
import { FakeWall } from "../support/fake-wall.js";

// POST /runsync and the worker routes on a warm call's path (job-take, job-done, job-stream) are
// answered by their fast entries when they can be (src/http/fast-routes.ts), queries included.
// Each request here is sent twice: once as it is, once with a fault rule armed that matches
// nothing, which leaves every request to the app. Both answers and both journal entries must be
// the same.

const CONFIG = {
  auth: { keys: [{ key: "test-key" }, { key: "reader", scopes: ["queue:read" as const] }] },
  endpoints: [
    { id: "echo", handler: "echo" as const, workersMin: 1, workersMax: 1, coldStartMs: 0 },
    { id: "ext", handler: "external" as const },
    { id: "idle-ext", handler: "external" as const },
  ],
};
const NOWHERE = { endpoint: "elsewhere", fault: { type: "latency" as const, ms: 1 } };
const KEY = { authorization: "Bearer test-key" };

interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | undefined;
}

describe("POST /runsync and the worker routes answered before the app", () => {
  let emu: Emulator;
  const wall = new FakeWall();
  let taken: boolean[] = [];
  const agent = sentTwiceEmulator({ port: 0, clock: { mode: "manual", wall }, config: CONFIG, log: () => {} }, (made) => (emu = made), (t) => taken.push(t));

  /**
   * A request and its answer. A worker's request to an endpoint that serves none is refused after
   * a pause of wall time (WORKER_ERROR_DELAY_MS), which the fake wall passes at once.
   */
  const send = async (s: Sent): Promise<Got> => {
    let answered = false;
    const got = sendWith(`${emu.url}${s.path}`, s.method ?? (s.body === undefined ? "GET" : "POST"), s.headers ?? KEY, agent, s.body).finally(() => (answered = true));
    for (let turns = 0; !answered && turns < 100_000; turns++) {
      await new Promise((r) => setImmediate(r));
      if (/\/(nope|echo)\/job-take\//.test(s.path) && wall.pending > 0) wall.advance(WORKER_ERROR_DELAY_MS);
      // An empty queue's job-take is held for pollHoldMs of wall time.
      if (s.path.startsWith("/v2/idle-ext/job-take/") && wall.pending > 0) wall.advance(POLL_HOLD_MS);
    }
    return got;
  };
  const run = async (input: Record<string, unknown> = { n: 1 }) => (JSON.parse((await send({ path: "/v2/ext/run", body: JSON.stringify({ input }) })).text) as { id: string }).id;

  /** `s` sent as it is, then (made by `second`, default the same) with every request left to the app. */
  async function both(s: Sent, second: Sent = s) {
    taken = [];
    const direct = await send(s);
    const first = lastEntry(emu);
    emu.faults.add(NOWHERE);
    const app = await send(second);
    emu.faults.clear();
    const entries: [JournalEntry, JournalEntry] = [first, lastEntry(emu)];
    expect(taken).toHaveLength(2);
    return { direct, app, directTaken: taken[0]!, appTaken: taken[1]!, entries };
  }

  /** The same answer, job ids aside, and the same journal entry, times and ids in the path aside. */
  function expectSame({ direct, app, entries }: Awaited<ReturnType<typeof both>>): void {
    expect(direct.status).toBe(app.status);
    expect(direct.headers).toEqual(app.headers);
    expect(idsOut(direct.text)).toBe(idsOut(app.text));
    const [a, b] = entries.map(({ at: _at, durationMs: _d, path, query, ...rest }) => ({ ...rest, path: idsOut(path), query: query && idsOut(query) }));
    expect(a).toEqual(b);
  }

  it("answers /runsync, with and without a wait, as the app does", async () => {
    for (const path of ["/v2/echo/runsync", "/v2/echo/runsync?wait=5000", "/v2/echo/runsync?wait=5000&other=x"]) {
      const r = await both({ path, headers: { ...KEY, "content-type": "application/json" }, body: '{"input":{"n":1}}' });
      expect(r.directTaken, path).toBe(true);
      expect(r.appTaken).toBe(false);
      expectSame(r);
      expect(JSON.parse(r.direct.text)).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
      expect(r.entries[0]).toMatchObject({ method: "POST", path: "/v2/echo/runsync", operation: "runsync", status: 200, query: path.split("?")[1] });
    }
  });

  it("answers job-take and job-done, in both URL forms, as the app does", async () => {
    // Two workers, one a side (a job-take with job_in_progress=0 says its worker holds no job).
    for (const query of ["?gpu=x&job_in_progress=0", "?gpu=x&job_in_progress=1&job_in_progress=0", ""]) {
      await run();
      await run();
      const took = await both({ path: `/v2/ext/job-take/wa${query}` }, { path: `/v2/ext/job-take/wb${query}` });
      expect(took.directTaken, query).toBe(true);
      expectSame(took);
      expect(took.direct.status).toBe(200);
      expect(JSON.parse(took.direct.text)).toMatchObject({ input: { n: 1 } });
      expect(took.entries[0]).toMatchObject({ path: "/v2/ext/job-take/wa", operation: "job-take", status: 200 });
      const [one, two] = [took.direct, took.app].map((g) => (JSON.parse(g.text) as { id: string }).id);
      const result = '{"output":{"ok":true}}';
      const done =
        query === ""
          ? await both({ path: `/v2/ext/job-done/wa?jobId=${one}&isStream=false`, body: result }, { path: `/v2/ext/job-done/wb?jobId=${two}&isStream=false`, body: result })
          : await both({ path: `/v2/ext/job-done/wa/${one}?gpu=x&isStream=false`, body: result }, { path: `/v2/ext/job-done/wb/${two}?gpu=x&isStream=false`, body: result });
      expect(done.directTaken).toBe(true);
      expectSame(done);
      expect(JSON.parse(done.direct.text)).toEqual({ id: one, status: "COMPLETED" });
      for (const id of [one, two]) expect(JSON.parse((await send({ path: `/v2/ext/status/${id}` })).text)).toMatchObject({ status: "COMPLETED", output: { ok: true } });
    }
  });

  it("answers job-stream and a streamed job's job-done as the app does", async () => {
    await run();
    await run();
    const ids = await Promise.all(["wa", "wb"].map(async (w) => (JSON.parse((await send({ path: `/v2/ext/job-take/${w}?gpu=x` })).text) as { id: string }).id));
    const chunk = await both({ path: `/v2/ext/job-stream/wa/${ids[0]}?gpu=x`, body: '{"output":"a"}' }, { path: `/v2/ext/job-stream/wb/${ids[1]}?gpu=x`, body: '{"output":"a"}' });
    expect(chunk.directTaken).toBe(true);
    expectSame(chunk);
    expect(JSON.parse(chunk.direct.text)).toEqual({ id: ids[0], status: "IN_PROGRESS" });
    const done = await both({ path: `/v2/ext/job-done/wa/${ids[0]}?isStream=true`, body: '{"output":[]}' }, { path: `/v2/ext/job-done/wb/${ids[1]}?isStream=true`, body: '{"output":[]}' });
    expectSame(done);
    const stream = JSON.parse((await send({ path: `/v2/ext/stream/${ids[0]}` })).text) as { status: string; stream: unknown[] };
    expect(stream).toEqual({ status: "COMPLETED", stream: [{ output: "a" }] });
  });

  it("ends an empty job-take's hold with 204, without a body, as the app does", async () => {
    const r = await both({ path: "/v2/idle-ext/job-take/w6?gpu=x&job_in_progress=0" });
    expect(r.directTaken).toBe(true);
    expectSame(r);
    expect(r.direct).toMatchObject({ status: 204, text: "" });
    expect(r.direct.headers["content-type"]).toBeUndefined();
    expect(r.entries[0]).toMatchObject({ path: "/v2/idle-ext/job-take/w6", operation: "job-take", status: 204 });
  });

  it("answers the errors of the worker routes and /runsync as the app does", async () => {
    const id = await run();
    const cases: Array<[Sent, number]> = [
      [{ path: "/v2/ext/job-take/w3?gpu=x", headers: {} }, 401],
      [{ path: "/v2/ext/job-take/w3?gpu=x", headers: { authorization: "Bearer nobody" } }, 401],
      [{ path: "/v2/ext/job-take/w3?gpu=x", headers: { authorization: "Bearer reader" } }, 403],
      [{ path: "/v2/nope/job-take/w3?gpu=x" }, 404],
      [{ path: "/v2/echo/job-take/w3?gpu=x" }, 400],
      [{ path: `/v2/ext/job-done/w3/${id}?isStream=false`, body: '{"output":1}' }, 409],
      [{ path: "/v2/ext/job-done/w3/nope", body: '{"output":1}' }, 404],
      [{ path: `/v2/ext/job-done/w3/${id}?jobId=other`, body: '{"output":1}' }, 400],
      [{ path: `/v2/ext/job-done/w3/${id}`, body: '{"output":' }, 400],
      [{ path: "/v2/echo/runsync", body: '{"nope":1}' }, 400],
      [{ path: "/v2/nope/runsync", body: '{"input":{}}' }, 404],
      [{ path: "/v2/echo/runsync", body: '{"input":{}}', headers: {} }, 401],
    ];
    for (const [s, status] of cases) {
      const r = await both(s);
      expect(r.directTaken, s.path).toBe(true);
      expectSame(r);
      expect(r.direct.status, s.path).toBe(status);
      expect(r.direct.headers["content-type"], s.path).toBe("application/problem+json");
    }
  });

  it("leaves to the app the queries it would read differently, and those answers are the app's", async () => {
    const cases: Array<[Sent, number]> = [
      // Something to decode, a value the schema refuses, `?` with nothing after it, a batch pool.
      [{ path: "/v2/echo/runsync?wait=5%3000", body: '{"input":{}}' }, 200],
      [{ path: "/v2/echo/runsync?wait=1", body: '{"input":{}}' }, 400],
      [{ path: "/v2/echo/runsync?wait=x+y", body: '{"input":{}}' }, 400],
      [{ path: "/v2/ext/job-take/w4?job_in_progress=maybe" }, 400],
      [{ path: "/v2/ext/job-take/w4?pool=nope" }, 400],
      [{ path: "/v2/ext/job-done/w4", body: '{"output":1}' }, 400],
      [{ path: "/v2/ext/job-done/w4?isStream=yes&jobId=x", body: '{"output":1}' }, 400],
      [{ path: "/v2/ext/job-take/w4/", method: "GET" }, 405],
      [{ path: "/v2/ext/job-take/w4?gpu=x", method: "PUT", body: "" }, 405],
    ];
    for (const [s, status] of cases) {
      const r = await both(s);
      expect(r.directTaken, s.path).toBe(false);
      expect(r.direct.status, s.path).toBe(status);
      expect(idsOut(r.direct.text)).toBe(idsOut(r.app.text));
    }
  });

  it("takes the job-done paths of a worker it has seen without asking the router again, and still leaves to the app a job id it would read differently", async () => {
    const cases: Array<[string, boolean]> = [
      ["/v2/ext/job-done/w5/job-a?gpu=x&isStream=false", true],
      // Same folder: the job id is the route's param, as before.
      ["/v2/ext/job-done/w5/job-b?gpu=x&isStream=false", true],
      // Same folder, a job id Hono decodes (%62 is "b"): the app's, as the first time.
      ["/v2/ext/job-done/w5/job-%62?gpu=x&isStream=false", false],
      // A job id that is a literal segment of another route: asked of the router, and still this route's.
      ["/v2/ext/job-done/w5/health?gpu=x&isStream=false", true],
    ];
    for (const [path, direct] of cases) {
      const r = await both({ path, headers: { ...KEY, "content-type": "application/json" }, body: '{"output":1}' });
      expect(r.directTaken, path).toBe(direct);
      expectSame(r);
    }
  });

  it("leaves the worker routes to the app while a request fault rule is armed, so the rule fires, and journals them alike", async () => {
    await run();
    emu.faults.add({ endpoint: "ext", operation: "job-take", times: 1, fault: { type: "http", status: 503 } });
    taken = [];
    expect((await send({ path: "/v2/ext/job-take/w5?gpu=x" })).status).toBe(503);
    expect(taken).toEqual([false]);
    emu.faults.clear();
    taken = [];
    const got = await send({ path: "/v2/ext/job-take/w5?gpu=x" });
    expect(got.status).toBe(200);
    expect(taken).toEqual([true]);
    const [refused, took] = emu.requests({ limit: 2 }).requests;
    expect(refused).toMatchObject({ path: "/v2/ext/job-take/w5", operation: "job-take", status: 503, query: "gpu=x" });
    expect(took).toMatchObject({ path: "/v2/ext/job-take/w5", operation: "job-take", status: 200, query: "gpu=x" });
  });
});

describe("a job-done whose result completes a /runsync", () => {
  /** A request handed straight to the route table, and what its answer wrote. */
  function exchange(method: string, url: string, body: string | undefined, order: string[], name: string) {
    const req = Object.assign(Readable.from(body === undefined ? [] : [Buffer.from(body)]), { method, url, headers: { host: "127.0.0.1:1234", authorization: "Bearer k" } });
    let wrote!: (g: { status: number; text: string }) => void;
    const sent = new Promise<{ status: number; text: string }>((r) => (wrote = r));
    let status = 0;
    const res = Object.assign(new EventEmitter(), {
      writableFinished: false,
      writeHead: (s: number) => (status = s),
      end: (text = "") => {
        order.push(name);
        wrote({ status, text });
      },
    });
    return { req, res, sent };
  }

  it("is answered after the /runsync, which a caller waits on", async () => {
    const { core, app } = await buildEmulator({ clock: { mode: "manual", wall: new FakeWall() }, config: { endpoints: [{ id: "ext", handler: "external" }] }, log: () => {} });
    try {
      const order: string[] = [];
      const sync = exchange("POST", "/v2/ext/runsync", '{"input":{"n":1}}', order, "runsync");
      expect(app.table.take(sync.req as never, sync.res as never)).toBe(true);
      const take = exchange("GET", "/v2/ext/job-take/w1?gpu=x&job_in_progress=0", undefined, order, "job-take");
      expect(app.table.take(take.req as never, take.res as never)).toBe(true);
      const job = JSON.parse((await take.sent).text) as { id: string };
      const done = exchange("POST", `/v2/ext/job-done/w1/${job.id}?gpu=x&isStream=false`, '{"output":{"ok":true}}', order, "job-done");
      expect(app.table.take(done.req as never, done.res as never)).toBe(true);
      const [answer, ack] = await Promise.all([sync.sent, done.sent]);
      expect(JSON.parse(answer.text)).toMatchObject({ id: job.id, status: "COMPLETED", output: { ok: true } });
      expect(ack).toEqual({ status: 200, text: JSON.stringify({ id: job.id, status: "COMPLETED" }) });
      expect(order).toEqual(["job-take", "runsync", "job-done"]);
    } finally {
      core.close();
    }
  });
});

/** The newest journal entry. */
/** The text with job ids (in JSON and in paths) and the two workers' ids replaced by placeholders of the same length. */
function idsOut(text: string): string {
  return text
    .replace(/\/w[ab]\b/g, "/w*").replace(/"id":"[^"]+"/g, (m) => `"id":"${"*".repeat(m.length - 7)}"`).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-u\d+/g, (m) => "*".repeat(m.length));
}
