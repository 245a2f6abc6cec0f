import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { RawJson, stringify } from "../../src/domain/json-text.js";
import { RUN_PAYLOAD_MAX_BYTES, RUNSYNC_PAYLOAD_MAX_BYTES } from "../../src/domain/limits.js";
import { createEmulator, type Emulator } from "../../src/index.js";
import { FakeWall } from "../support/fake-wall.js";
import { inProcess, type InProcess } from "../support/in-process.js";

/**
 * A request of the service's maximum size must not stop every other request while it is handled:
 * its body is parsed off the event loop, and a job's large input or output is never parsed on it
 * again (written to SQLite, handed to a worker process, and answered, as the text it came as).
 * These tests count what the event loop parses rather than time it: `JSON.parse` of a text this
 * size is the block (a tenth of a second for one long string, seconds for many small numbers).
 */
const MB = 1024 * 1024;
const KEY = { authorization: "worker-key" };

/** A `/run` body of about `bytes` bytes holding one long string (a base64 image). */
const imageBody = (bytes: number, extra = "") => `{"input":{"image":"${"A".repeat(bytes - 40)}"}${extra}}`;
/** A body of about `bytes` bytes of small numbers: the slowest kind of JSON to parse. */
const numbersBody = (bytes: number) => `{"input":{"v":[${Array.from({ length: Math.floor(bytes / 4) }, (_, i) => i % 100).join(",")}]}}`;

/** Counts the event loop's `JSON.parse` calls on texts of at least a megabyte while `fn` runs. */
async function largeParses<T>(fn: () => Promise<T>): Promise<{ result: T; parses: number }> {
  const parse = JSON.parse;
  let parses = 0;
  const spy = vi.spyOn(JSON, "parse").mockImplementation(((text: string, reviver?: (k: string, v: unknown) => unknown) => {
    if (typeof text === "string" && text.length >= MB) parses++;
    return parse(text, reviver);
  }) as typeof JSON.parse);
  try {
    return { result: await fn(), parses };
  } finally {
    spy.mockRestore();
  }
}

let emu: Emulator | undefined;
let e: InProcess | undefined;
afterEach(async () => {
  await emu?.close();
  await e?.close();
  emu = undefined;
  e = undefined;
});

describe("large payloads stay text on the event loop", () => {
  it("a 10 MB /run over a socket, taken by a worker process and answered on /status, is never parsed on the event loop", async () => {
    emu = await createEmulator({ clock: { mode: "manual", wall: new FakeWall() }, config: { endpoints: [{ id: "ext", handler: "external" }] } });
    const url = emu.url;
    const body = imageBody(RUN_PAYLOAD_MAX_BYTES - 1024);
    const image = "A".repeat(RUN_PAYLOAD_MAX_BYTES - 1024 - 40);
    const { result, parses } = await largeParses(async () => {
      const run = await fetch(`${url}/v2/ext/run`, { method: "POST", headers: { ...KEY, "content-type": "application/json" }, body });
      const { id } = (await run.json()) as { id: string };
      const take = await fetch(`${url}/v2/ext/job-take/w1?gpu=x&job_in_progress=0`, { headers: KEY });
      const taken = await take.text();
      // The worker's result, as large as a result may be.
      const output = { image: image + image.slice(0, 8 * MB) };
      const done = await fetch(`${url}/v2/ext/job-done/w1/${id}?gpu=x&isStream=false`, { method: "POST", headers: KEY, body: JSON.stringify({ output }) });
      const status = await (await fetch(`${url}/v2/ext/status/${id}`, { headers: KEY })).text();
      return { id, taken, done: done.status, status, output };
    });
    // The test's own parses below come after the count.
    expect(parses).toBe(0);
    expect(JSON.parse(result.taken)).toEqual({ id: result.id, input: { image } });
    expect(result.done).toBe(200);
    const status = JSON.parse(result.status);
    expect(status).toMatchObject({ id: result.id, status: "COMPLETED" });
    expect(status.output).toEqual(result.output);
  });

  it("a /run of 10 MB of small numbers is parsed off the event loop and reaches the worker whole", async () => {
    emu = await createEmulator({ clock: { mode: "manual", wall: new FakeWall() }, config: { endpoints: [{ id: "ext", handler: "external" }] } });
    const body = numbersBody(RUN_PAYLOAD_MAX_BYTES - 64 * 1024);
    const { result, parses } = await largeParses(async () => {
      const run = await fetch(`${emu!.url}/v2/ext/run`, { method: "POST", headers: KEY, body });
      expect(run.status).toBe(200);
      return (await fetch(`${emu!.url}/v2/ext/job-take/w1?gpu=x&job_in_progress=0`, { headers: KEY })).text();
    });
    expect(parses).toBe(0);
    expect(JSON.parse(result).input).toEqual(JSON.parse(body).input);
  });

  it("through the app (not the fast path), /runsync of 20 MB answers the handler's output, and the job's stored input is the one sent", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "img", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
    const body = imageBody(RUNSYNC_PAYLOAD_MAX_BYTES / 2);
    const reply = await e.post("/v2/img/runsync", body);
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe("COMPLETED");
    expect(reply.body.output).toEqual(JSON.parse(body).input);
    const detail = await e.get(`/_emulator/jobs/${reply.body.id}`);
    expect(detail.body.input).toEqual(JSON.parse(body).input);
    expect(detail.body.output).toEqual(JSON.parse(body).input);
  });

  it("a large body is refused as a small one is: not JSON, nested too deep, an input that is not an object, over the limit", async () => {
    e = await inProcess({ config: { endpoints: [{ id: "img", handler: "echo", workersMin: 0, workersMax: 0 }] } });
    const broken = imageBody(2 * MB).slice(0, -1);
    const notJson = await e.post("/v2/img/run", broken);
    expect(notJson.status).toBe(400);
    expect(notJson.body.detail).toMatch(/not valid JSON/);
    const deep = `{"input":{"image":"${"A".repeat(2 * MB)}","deep":${"[".repeat(1100)}${"]".repeat(1100)}}}`;
    const tooDeep = await e.post("/v2/img/run", deep);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.detail).toMatch(/levels deep/);
    const list = await e.post("/v2/img/run", `{"input":["${"A".repeat(2 * MB)}"]}`);
    expect(list.status).toBe(400);
    expect(JSON.stringify(list.body)).toMatch(/input/);
    expect((await e.post("/v2/img/run", imageBody(RUN_PAYLOAD_MAX_BYTES + 100))).status).toBe(413);
    // The rest of a large body is still checked: a misspelt policy key, a bad webhook.
    const badPolicy = await e.post("/v2/img/run", imageBody(2 * MB, ',"policy":{"executionTimout":5000}'));
    expect(badPolicy.status).toBe(400);
    expect(JSON.stringify(badPolicy.body)).toMatch(/executionTimout/);
    const ok = await e.post("/v2/img/run", imageBody(2 * MB, ',"policy":{"ttl":20000}'));
    expect(ok.status).toBe(200);
  });

  it("a large output of a handler in this process is kept as its text, and a test's waitForJob gets its value", async () => {
    emu = await createEmulator({
      clock: { mode: "manual", wall: new FakeWall() },
      config: { endpoints: [{ id: "big", handler: "inline", workersMin: 1, coldStartMs: 0 }] },
      handlers: { inline: (input: Record<string, unknown>) => ({ tiles: Array.from({ length: 4 }, () => String(input.fill).repeat(MB)) }) },
    } as Parameters<typeof createEmulator>[0]);
    const { id } = (await (await fetch(`${emu.url}/v2/big/run`, { method: "POST", headers: KEY, body: JSON.stringify({ input: { fill: "z" } }) })).json()) as { id: string };
    const view = await emu.waitForJob("big", id, "COMPLETED");
    expect(view.output).toEqual({ tiles: Array.from({ length: 4 }, () => "z".repeat(MB)) });
    const { result, parses } = await largeParses(() => fetch(`${emu!.url}/v2/big/status/${id}`, { headers: KEY }).then((r) => r.text()));
    expect(parses).toBe(0);
    expect(JSON.parse(result).output).toEqual(view.output);
  });
});

describe("a handler in this process with payloads of the maximum size", () => {
  it("a 20 MB /runsync of small numbers to echo: no native parse or stringify of more than a slice on the event loop, and its payloads stored in parts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-large-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "state.db");
    emu = await createEmulator({ db: file, clock: { mode: "manual", wall: new FakeWall() }, config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, coldStartMs: 0 }] } });
    const body = numbersBody(RUNSYNC_PAYLOAD_MAX_BYTES - 64 * 1024);
    // Replaced by hand: a spy would keep every argument, 20 MB texts included.
    const parse = JSON.parse;
    const stringifyNative = JSON.stringify;
    const big: string[] = [];
    JSON.parse = ((text: string, reviver?: never) => {
      if (typeof text === "string" && text.length > 600 * 1024) big.push(`parse ${text.length}`);
      return parse(text, reviver);
    }) as typeof JSON.parse;
    JSON.stringify = ((value: unknown, replacer?: never, space?: never) => {
      const out = stringifyNative(value, replacer, space);
      if (typeof out === "string" && out.length > 600 * 1024) big.push(`stringify ${out.length}`);
      return out;
    }) as typeof JSON.stringify;
    let text: string;
    try {
      const reply = await fetch(`${emu.url}/v2/echo/runsync`, { method: "POST", headers: KEY, body });
      expect(reply.status).toBe(200);
      text = await reply.text();
    } finally {
      JSON.parse = parse;
      JSON.stringify = stringifyNative;
    }
    expect(big).toEqual([]);
    // The output is the input, written out as it came (compared as text: 5 million numbers compare slowly).
    const inputText = body.slice('{"input":'.length, -1);
    expect(text.length).toBeGreaterThan(inputText.length);
    expect(text.includes(`"output":${inputText}`)).toBe(true);
    const answer = { id: /"id":"([^"]+)"/.exec(text)![1], status: /"status":"([A-Z_]+)"/.exec(text)![1] };
    expect(answer.status).toBe("COMPLETED");
    await emu.close(); // it holds the file's lock
    emu = undefined;
    const db = new Database(file, { readonly: true });
    onTestFinished(() => void db.close());
    const stored = db.prepare(`SELECT input, output FROM jobs WHERE id = ?`).get(answer.id) as { input: string; output: string };
    expect(stored.input).toMatch(/^#parts:/);
    expect(stored.output).toMatch(/^#parts:/);
  });
});

describe("stringify", () => {
  it("writes a RawJson as its text, anywhere in a value, and JSON.stringify writes its value", () => {
    const raw = new RawJson('{"a":[1,2,{"b":"c"}]}');
    expect(stringify({ x: raw, y: [raw, 3] })).toBe('{"x":{"a":[1,2,{"b":"c"}]},"y":[{"a":[1,2,{"b":"c"}]},3]}');
    expect(stringify(raw)).toBe('{"a":[1,2,{"b":"c"}]}');
    expect(JSON.stringify({ x: raw })).toBe('{"x":{"a":[1,2,{"b":"c"}]}}');
    // Nested calls keep their own texts.
    const inner = new RawJson('"inner"');
    const outer = { toJSON: () => JSON.parse(stringify({ inner })) };
    expect(stringify({ outer, raw })).toBe('{"outer":{"inner":"inner"},"raw":{"a":[1,2,{"b":"c"}]}}');
  });

  it("never takes a caller's string for a text to splice in", () => {
    const raw = new RawJson("[1]");
    const lookalike = "\u{10FFFF}raw-0-0";
    expect(JSON.parse(stringify({ raw, s: lookalike, t: `"${lookalike}"` }))).toEqual({ raw: [1], s: lookalike, t: `"${lookalike}"` });
  });
});

describe("request bodies in flight are bounded (memory.requestBodyBytes)", () => {
  const BUDGET = 32 * MB;
  /** A body sent chunk by chunk, open until `end()`. */
  const slowBody = () => {
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) });
    const send = (text: string) => ctl.enqueue(new TextEncoder().encode(text));
    return { stream, send, end: () => (send(`"}}`), ctl.close()) };
  };

  it("a body past the budget is refused with 503 and Retry-After while it arrives; the others are answered, and their bytes come back", async () => {
    e = await inProcess({ config: { memory: { requestBodyBytes: BUDGET }, endpoints: [{ id: "img", handler: "echo", workersMin: 0, workersMax: 0 }] } });
    const post = (body: ReadableStream<Uint8Array>) =>
      e!.app.request("http://minipod.test/v2/img/run", { method: "POST", body, headers: { authorization: "Bearer k", "content-type": "application/json" }, duplex: "half" } as RequestInit);
    // Three bodies of 9 MB each, unfinished: 27 MB of the 32 held.
    const open = [slowBody(), slowBody(), slowBody()];
    const answers = open.map((b) => post(b.stream));
    const prefix = '{"input":{"image":"';
    for (const b of open) b.send(prefix + "A".repeat(MB - prefix.length));
    for (let i = 1; i < 9; i++) for (const b of open) b.send("A".repeat(MB));
    for (let i = 0; i < 100 && e.core.bodies.inUse < 27 * MB; i++) await new Promise((r) => setImmediate(r));
    expect(e.core.bodies.inUse).toBe(27 * MB);
    const late = slowBody();
    const refused = post(late.stream);
    late.send(prefix + "A".repeat(6 * MB));
    const answer = await refused;
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("1");
    expect(((await answer.json()) as { detail: string }).detail).toMatch(/memory\.requestBodyBytes/);
    // The refused body gave back what it took; the three go on and are answered.
    expect(e.core.bodies.inUse).toBe(27 * MB);
    for (const b of open) b.end();
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(e.core.bodies.inUse).toBe(0);
  });

  it("over a socket (the fast path and the app alike), bodies answered one after another give their bytes back", async () => {
    emu = await createEmulator({ clock: { mode: "manual", wall: new FakeWall() }, config: { memory: { requestBodyBytes: BUDGET }, endpoints: [{ id: "ext", handler: "external" }] } });
    const body = imageBody(RUN_PAYLOAD_MAX_BYTES - 1024);
    // Five 10 MB bodies through a 32 MB budget: each must have given its bytes back.
    for (let i = 0; i < 5; i++) {
      const fast = await fetch(`${emu.url}/v2/ext/run`, { method: "POST", headers: KEY, body });
      expect(fast.status).toBe(200);
      await fast.text();
    }
    for (let i = 0; i < 5; i++) {
      // A body that fails its check is refused, and gives its bytes back too.
      const refused = await fetch(`${emu.url}/v2/ext/run`, { method: "POST", headers: KEY, body: body.slice(0, -2) });
      expect(refused.status).toBe(400);
      await refused.text();
    }
  });

  it("a GraphQL body counts against the same budget: past what is left it gets the answer a REST body gets", async () => {
    e = await inProcess({ config: { memory: { requestBodyBytes: BUDGET }, endpoints: [{ id: "img", handler: "echo", workersMin: 0, workersMax: 0 }] } });
    const headers = { authorization: "Bearer k", "content-type": "application/json" };
    const post = (path: string, body: string | ReadableStream<Uint8Array>) => e!.app.request(`http://minipod.test${path}`, { method: "POST", body, headers, duplex: "half" } as RequestInit);
    // Four unfinished REST bodies hold 31.5 MB of the 32: half a megabyte is left.
    const open = [slowBody(), slowBody(), slowBody(), slowBody()];
    const answers = open.map((b) => post("/v2/img/run", b.stream));
    const prefix = '{"input":{"image":"';
    for (const b of open) b.send(prefix + "A".repeat(MB / 2 - prefix.length));
    for (let i = 1; i < 18; i++) for (const b of open.slice(0, 3)) b.send("A".repeat(MB / 2));
    for (let i = 1; i < 9; i++) open[3]!.send("A".repeat(MB / 2));
    for (let i = 0; i < 100 && e.core.bodies.inUse < 31.5 * MB; i++) await new Promise((r) => setImmediate(r));
    expect(e.core.bodies.inUse).toBe(31.5 * MB);
    // A 900 KB body, under GraphQL's own 1 MiB limit, on each surface.
    const pad = "A".repeat(900 * 1024);
    const rest = await post("/v2/img/run", JSON.stringify({ input: { pad } }));
    const graphql = await post("/graphql", JSON.stringify({ query: "{ myself { id } }", variables: { pad } }));
    expect([rest.status, graphql.status]).toEqual([503, 503]);
    expect(graphql.headers.get("retry-after")).toBe(rest.headers.get("retry-after"));
    expect(graphql.headers.get("content-type")).toBe(rest.headers.get("content-type"));
    const detail = async (r: Response) => ((await r.json()) as { detail: string }).detail;
    expect(await detail(graphql)).toBe(await detail(rest));
    expect(e.core.bodies.inUse).toBe(31.5 * MB);
    for (const b of open) b.end();
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // With the budget free again, the same GraphQL body is answered, and gives its bytes back.
    const again = await post("/graphql", JSON.stringify({ query: "{ myself { id } }", variables: { pad } }));
    expect(again.status).toBe(200);
    expect(e.core.bodies.inUse).toBe(0);
  });

  it("the budget is checked when the config is read", async () => {
    await expect(inProcess({ config: { memory: { requestBodyBytes: 1024 } } })).rejects.toThrow(/memory\.requestBodyBytes/);
  });
});
