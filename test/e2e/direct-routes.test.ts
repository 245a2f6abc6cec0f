import fc from "fast-check";
import { request, Agent } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { Readable } from "node:stream";
import { buildEmulator, createEmulator, type Emulator } from "../../src/compose/emulator.js";
import type { JournalEntry } from "../../src/domain/observability.js";
import { authorization, body as bodies, contentType, segment } from "../support/arbitraries.js";
import { comparable, lastEntry, send as sendWith, sentTwiceEmulator, type Got } from "../support/raw-http.js";

// POST /run and GET /status are answered by their fast entries when they can be (src/http/fast-routes.ts).
// Every request here is sent twice over HTTP: once as it is, once with a fault rule armed that
// matches nothing, which leaves every request to the app. Both answers and both journal entries
// must be the same.

const CONFIG = {
  logLevel: "info" as const,
  auth: {
    keys: [{ key: "test-key" }, { key: "reader", scopes: ["queue:read" as const] }, { key: "writer", scopes: ["queue:write" as const] }],
  },
  endpoints: [
    { id: "echo", handler: "echo" as const, workersMin: 1, workersMax: 1, coldStartMs: 0 },
    { id: "idle", handler: "echo" as const, workersMin: 0, workersMax: 0 },
  ],
};
const NOWHERE = { endpoint: "elsewhere", fault: { type: "latency" as const, ms: 1 } };

interface Sent {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | undefined;
}

describe("POST /run and GET /status answered before the app", () => {
  let emu: Emulator;
  let taken: boolean[] = [];
  const logs: string[] = [];
  const agent = sentTwiceEmulator({ port: 0, clock: "manual", config: CONFIG, log: (line) => logs.push(line) }, (made) => (emu = made), (t) => taken.push(t));

  const send = (s: Sent): Promise<Got> => sendWith(`${emu.url}${s.path ?? "/v2/echo/run"}`, s.method ?? "POST", s.headers ?? { authorization: "Bearer test-key" }, agent, s.body);

  /** The answer and journal entry of `s` sent as it is, and with every request left to the app. */
  async function both(s: Sent): Promise<{ direct: Got; app: Got; directTaken: boolean; appTaken: boolean; entries: [JournalEntry, JournalEntry] }> {
    taken = [];
    const direct = await send(s);
    const first = lastEntry(emu);
    emu.faults.add(NOWHERE);
    const app = await send(s);
    emu.faults.clear();
    const second = lastEntry(emu);
    expect(taken).toHaveLength(2);
    return { direct, app, directTaken: taken[0]!, appTaken: taken[1]!, entries: [first, second] };
  }

  /** The same answer, job ids aside, and the same journal entry, times aside. */
  function expectSame({ direct, app, entries }: Awaited<ReturnType<typeof both>>): void {
    expect(direct.status).toBe(app.status);
    expect(direct.headers).toEqual(app.headers);
    expect(jobIdsOut(direct.text)).toBe(jobIdsOut(app.text));
    const [a, b] = entries.map(({ at: _at, durationMs: _d, ...rest }) => rest);
    expect(a).toEqual(b);
  }

  it("answers a submission as the app does, and the job is the same", async () => {
    const s = { headers: { authorization: "Bearer test-key", "content-type": "application/json" }, body: JSON.stringify({ input: { prompt: "hi" }, extra: 1, policy: { ttl: 60_000 } }) };
    const r = await both(s);
    expect(r.directTaken).toBe(true);
    expect(r.appTaken).toBe(false);
    expectSame(r);
    expect(r.direct.status).toBe(200);
    expect(r.direct.headers["content-type"]).toBe("application/json");
    const [one, two] = [JSON.parse(r.direct.text) as { id: string }, JSON.parse(r.app.text) as { id: string }];
    await emu.runUntilIdle();
    const views = await Promise.all([one, two].map(({ id }) => send({ method: "GET", path: `/v2/echo/status/${id}` }).then((g) => JSON.parse(g.text) as Record<string, unknown>)));
    expect(views[0]).toMatchObject({ status: "COMPLETED", output: { prompt: "hi" } });
    expect({ ...views[0], id: "", workerId: "" }).toEqual({ ...views[1], id: "", workerId: "" });
    expect(logs.filter((l) => / POST \/v2\/echo\/run 200 /.test(l))).toHaveLength(2);
  });

  it.each([
    ["no key", { headers: {}, body: '{"input":{}}' }, 401],
    ["a malformed key", { headers: { authorization: "Bearer a b" }, body: '{"input":{}}' }, 401],
    ["an unknown key", { headers: { authorization: "Bearer nobody" }, body: '{"input":{}}' }, 401],
    ["a key without queue:write", { headers: { authorization: "Bearer reader" }, body: '{"input":{}}' }, 403],
    ["a body that is not JSON", { body: '{"input":' }, 400],
    ["an empty body", { body: undefined }, 400],
    ["wrong types", { body: '{"input":1,"policy":{"ttl":"soon"},"webhook":"not a url"}' }, 400],
    ["an unknown endpoint", { path: "/v2/nope/run", body: '{"input":{}}' }, 404],
    ["secrets in the body", { body: '{"input":{},"s3Config":{"accessId":"a","accessSecret":"s3-secret-value","bucketName":"b","endpointUrl":"u"}}' }, 200],
    // A port of 0 may give minipod one of 60000-60999; the URL is the same text.
    ["a Host of a port over 59999", { headers: { authorization: "Bearer test-key", host: "127.0.0.1:60999" }, body: '{"input":{}}' }, 200],
    ["a Host of the highest port", { headers: { authorization: "Bearer test-key", host: "localhost:65535" }, body: '{"input":{}}' }, 200],
  ] as const)("answers %s as the app does", async (_what, s, status) => {
    const r = await both(s as Sent);
    expect(r.directTaken).toBe(true);
    expectSame(r);
    expect(r.direct.status).toBe(status);
    if (status !== 200) expect(r.direct.headers["content-type"]).toBe("application/problem+json");
    expect(JSON.stringify(r.entries)).not.toContain("s3-secret-value");
    // Both journal entries keep the error answered (compared above), as it was sent.
    expect(r.entries[0].response).toEqual(status === 200 ? undefined : JSON.parse(r.direct.text));
    if (_what === "a body that is not JSON") expect(JSON.parse(r.direct.text).detail).toBe('the request body is not valid JSON; send a JSON object such as {"input": {...}}');
  });

  it("reads a body over the limit only up to the limit, then answers 413 as the app does", async () => {
    const big = JSON.stringify({ input: { blob: "x".repeat(10 * 1024 * 1024) } });
    // Chunked: no Content-Length to refuse it by, so the limit is found while reading.
    const r = await both({ headers: { authorization: "Bearer test-key", "transfer-encoding": "chunked" }, body: big });
    expect(r.directTaken).toBe(true);
    expectSame(r);
    expect(r.direct.status).toBe(413);
    // A declared length over the limit is the app's to refuse.
    const declared = await both({ headers: { authorization: "Bearer test-key", "content-length": String(Buffer.byteLength(big)) }, body: big });
    expect(declared.directTaken).toBe(false);
    expect(declared.direct.status).toBe(413);
  });

  it("leaves to the app what it would read differently, and those answers are the app's", async () => {
    const cases: Array<[Sent, number]> = [
      [{ path: "/v2/echo/run?x=1", body: '{"input":{}}' }, 200],
      [{ path: "/v2/ec%68o/run", body: '{"input":{}}' }, 200],
      [{ path: "/v2/./run", body: '{"input":{}}' }, 404],
      [{ path: "/v2/echo/run/", body: '{"input":{}}' }, 405],
      [{ path: "/v2/network-volumes/run", body: '{"input":{}}' }, 404],
      [{ method: "PUT", body: '{"input":{}}' }, 405],
    ];
    for (const [s, status] of cases) {
      const r = await both(s);
      expect(r.directTaken, s.path ?? s.method).toBe(false);
      expect(r.direct.status, s.path ?? s.method).toBe(status);
      expect(jobIdsOut(r.direct.text)).toBe(jobIdsOut(r.app.text));
    }
  });

  it("leaves every request to the app while a request fault rule is armed, so the rule fires", async () => {
    emu.faults.add({ endpoint: "echo", operation: "run", times: 1, fault: { type: "http", status: 503 } });
    taken = [];
    const faulted = await send({ body: '{"input":{}}' });
    expect(taken).toEqual([false]);
    expect(faulted.status).toBe(503);
    taken = [];
    expect((await send({ body: '{"input":{}}' })).status).toBe(200);
    expect(taken).toEqual([true]);
  });

  it("survives a client that leaves halfway through its body, and goes on answering", async () => {
    const port = new URL(emu.url).port;
    const before = emu.requests().count;
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(`POST /v2/echo/run HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer test-key\r\ncontent-length: 100\r\n\r\n{"input":`);
        setImmediate(() => socket.destroy());
      });
      socket.on("close", () => resolve());
    });
    await expect.poll(() => emu.requests().count).toBe(before + 1);
    expect(lastEntry(emu)).toMatchObject({ method: "POST", path: "/v2/echo/run", status: 400 });
    expect((await send({ body: '{"input":{}}' })).status).toBe(200);
  });

  it("answers a job's status as the app does, queued, finished or unknown", async () => {
    const submit = async (endpoint: string) => (JSON.parse((await send({ path: `/v2/${endpoint}/run`, body: '{"input":{"n":1}}' })).text) as { id: string }).id;
    const done = await submit("echo");
    await emu.runUntilIdle();
    const queued = await submit("idle");
    const cases: Array<[Sent, number]> = [
      [{ method: "GET", path: `/v2/idle/status/${queued}` }, 200],
      [{ method: "GET", path: `/v2/echo/status/${done}` }, 200],
      [{ method: "GET", path: `/v2/echo/status/${done}`, headers: { authorization: "Bearer reader" } }, 200],
      [{ method: "GET", path: `/v2/echo/status/${queued}` }, 404],
      [{ method: "GET", path: "/v2/echo/status/nope" }, 404],
      [{ method: "GET", path: `/v2/nope/status/${done}` }, 404],
      [{ method: "GET", path: `/v2/echo/status/${done}`, headers: {} }, 401],
      [{ method: "GET", path: `/v2/echo/status/${done}`, headers: { authorization: "Bearer writer" } }, 403],
    ];
    for (const [s, status] of cases) {
      const r = await both(s);
      expect(r.directTaken, s.path).toBe(true);
      expectSame(r);
      expect(r.direct.status, s.path).toBe(status);
    }
    const view = JSON.parse((await send({ method: "GET", path: `/v2/echo/status/${done}` })).text) as Record<string, unknown>;
    expect(view).toMatchObject({ id: done, status: "COMPLETED", output: { n: 1 } });
    expect(JSON.parse((await send({ method: "GET", path: `/v2/idle/status/${queued}` })).text)).toMatchObject({ id: queued, status: "IN_QUEUE" });
  });

  it("leaves to the app the status requests it would read differently", async () => {
    const id = (JSON.parse((await send({ body: '{"input":{}}' })).text) as { id: string }).id;
    const cases: Array<[Sent, number]> = [
      [{ method: "GET", path: `/v2/echo/status/${id}?ttl=1` }, 400],
      [{ method: "GET", path: `/v2/echo/status/${id}?ttl=36%300000` }, 200],
      [{ method: "GET", path: `/v2/echo/status/${id.replace("-", "%2D")}` }, 200],
      [{ method: "HEAD", path: `/v2/echo/status/${id}` }, 200],
      [{ method: "GET", path: `/v2/echo/status/${id}/` }, 405],
    ];
    for (const [s, status] of cases) {
      const r = await both(s);
      expect(r.directTaken, s.path).toBe(false);
      expect(r.direct.status, s.path).toBe(status);
      expect(r.direct.text).toBe(r.app.text);
    }
  });

  it("answers a status with a query it reads as it is (a ttl set) as the app does", async () => {
    const id = (JSON.parse((await send({ body: '{"input":{}}' })).text) as { id: string }).id;
    for (const path of [`/v2/echo/status/${id}?ttl=3600000`, `/v2/echo/status/${id}?other=1&ttl=7200000`]) {
      const r = await both({ method: "GET", path });
      expect(r.directTaken, path).toBe(true);
      expectSame(r);
      expect(r.direct.status).toBe(200);
      expect(r.entries[0].query).toBe(path.split("?")[1]);
    }
    expect(JSON.stringify(emu.events(id))).toContain("ttl set to 7200000 ms");
  });

  it("answers a status as the app does whatever the ids and key", async () => {
    const id = (JSON.parse((await send({ body: '{"input":{}}' })).text) as { id: string }).id;
    const ids = fc.oneof(fc.constant(id), segment.filter((x) => x !== "" && !x.includes("/")));
    const endpoints = fc.oneof(fc.constantFrom("echo", "idle"), segment.filter((x) => x !== "" && !x.includes("/")));
    await fc.assert(
      fc.asyncProperty(endpoints, ids, authorization, async (endpoint, job, auth) => {
        const r = await both({ method: "GET", path: `/v2/${endpoint}/status/${job}`, headers: { authorization: auth } });
        expect(r.direct.status).toBe(r.app.status);
        expectSame(r);
      }),
      { numRuns: 150 },
    );
  });

  it("answers as the app does whatever the body, key and content type", async () => {
    await fc.assert(
      fc.asyncProperty(bodies, authorization, contentType, async (body, auth, type) => {
        const headers: Record<string, string> = { authorization: auth };
        if (type !== undefined) headers["content-type"] = type;
        const r = await both({ headers, body });
        expect(r.directTaken).toBe(true);
        expectSame(r);
      }),
      { numRuns: 150 },
    );
  });
});

describe("POST /run answered before the app, with queue limits on", () => {
  it("counts requests and refuses the one over the limit as the app does", async () => {
    const emu = await createEmulator({ port: 0, clock: "manual", config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 0, workersMax: 0 }] } });
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const post = () =>
      new Promise<Got>((resolve, reject) => {
        const req = request(`${emu.url}/v2/echo/run`, { method: "POST", headers: { authorization: "Bearer k" }, agent }, (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString())).on("end", () => resolve({ status: res.statusCode!, headers: comparable(res.headers), text }));
        });
        req.on("error", reject);
        req.end('{"input":{}}');
      });
    try {
      // /run allows 1,000 requests per 10 s window of the virtual clock, which stands still here.
      const first = await Promise.all(Array.from({ length: 1000 }, post));
      expect(first.every((g) => g.status === 200)).toBe(true);
      const direct = await post();
      emu.faults.add(NOWHERE);
      const app = await post();
      expect(direct.status).toBe(429);
      expect(direct).toEqual(app);
      expect(Number(direct.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(direct.text)).toMatchObject({ status: 429, detail: expect.stringContaining("1000 requests per 10 s") });
    } finally {
      agent.destroy();
      await emu.close();
    }
  });
});

describe("POST /run answered before the app, and the commit", () => {
  /** Hands the direct route a request and an answer of its own making; `sent` settles with what was written. */
  function exchange(body: string) {
    const req = Object.assign(Readable.from([Buffer.from(body)]), { method: "POST", url: "/v2/echo/run", headers: { host: "127.0.0.1:1234", authorization: "Bearer k" } });
    let wrote!: (g: { status: number; headers: Record<string, unknown>; text: string }) => void;
    const sent = new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((r) => (wrote = r));
    let head: { status: number; headers: Record<string, unknown> } | undefined;
    const res = { writeHead: (status: number, headers: Record<string, unknown>) => (head = { status, headers }), end: (text: string) => wrote({ ...head!, text }) };
    return { req, res, sent };
  }

  it("answers only once the job is committed, and 500 when the commit fails", async () => {
    const errors: string[] = [];
    const { core, app } = await buildEmulator({
      clock: "manual",
      config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 0, workersMax: 0 }] },
      logLevel: "error",
      log: (l) => errors.push(l),
    });
    try {
      // Each wait for the commit, to settle by hand.
      const commits: Array<{ ok: () => void; fail: (e: Error) => void }> = [];
      core.jobStore.whenDurable = () => new Promise<void>((ok, fail) => commits.push({ ok, fail }));
      const one = exchange('{"input":{}}');
      let answered = false;
      void one.sent.then(() => (answered = true));
      expect(app.table.take(one.req as never, one.res as never)).toBe(true);
      await expect.poll(() => commits.length).toBe(1);
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(answered).toBe(false);
      commits[0]!.ok();
      expect(await one.sent).toMatchObject({ status: 200, headers: { "Content-Type": "application/json" } });

      const two = exchange('{"input":{}}');
      app.table.take(two.req as never, two.res as never);
      await expect.poll(() => commits.length).toBe(2);
      commits[1]!.fail(new Error("disk full"));
      const failed = await two.sent;
      expect(failed.status).toBe(500);
      expect(JSON.parse(failed.text)).toMatchObject({ status: 500, title: "Internal Server Error" });
      expect(errors.join("\n")).toMatch(/POST \/v2\/echo\/run: Error: disk full/);
    } finally {
      core.close();
    }
  });
});

/** The newest journal entry. */
/** The text with job ids replaced by a placeholder of the same length. */
function jobIdsOut(text: string): string {
  return text.replace(/"id":"[^"]+"/g, (m) => `"id":"${"*".repeat(m.length - 7)}"`);
}
