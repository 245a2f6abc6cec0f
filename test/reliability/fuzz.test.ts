import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcess, type InProcess, type Reply } from "../support/in-process.js";

const CONFIG = {
  rateLimits: { enabled: false },
  endpoints: [
    { id: "echo", handler: "echo", workersMin: 1, workersMax: 2, coldStartMs: 0 },
    { id: "work", handler: "scripted", workersMin: 0, workersMax: 1, coldStartMs: 1000 },
  ],
};

/** Never fuzzed: the live feed never ends, and fault rules exist to answer 5xx on purpose. */
const EXCLUDED = new Set(["GET /_emulator/feed", "POST /_emulator/faults"]);

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "QUERY", "PURGE", "get", "Post"];

/** Strings a path parameter or segment might hold, from the plausible to the hostile. */
const segment = fc.oneof(
  fc.constantFrom("echo", "work", "nope", "", ".", "..", "%", "%00", "%2F", "%E0%A4%A", "a%20b", "-u1", "sync-x", "0", "-1", "1e309", "null", "undefined", "__proto__", "constructor"),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: "grapheme", maxLength: 12 }).map(encodeURIComponent),
  fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/),
  fc.constant("x".repeat(5000)),
);

const query = fc.oneof(
  fc.constant(""),
  fc.constantFrom("?wait=1000", "?wait=-5", "?wait=abc", "?wait=1e400", "?ttl=10000", "?ttl=0", "?ttl=9007199254740993", "?limit=-1&offset=x", "?jobId=", "?isStream=maybe", "?a=1&a=2", "?%zz=1"),
  fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 12 })), { maxLength: 3 }).map((kv) => "?" + kv.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")),
);

/** Nests a value `depth` times in arrays or objects. */
const nested = (depth: number, inObject: boolean) => {
  let text = "1";
  for (let i = 0; i < depth; i++) text = inObject ? `{"a":${text}}` : `[${text}]`;
  return text;
};

const json = fc.jsonValue({ maxDepth: 4 });
const body = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: json.map((input) => JSON.stringify({ input })) },
  { weight: 3, arbitrary: fc.record({ input: json, policy: fc.anything(), s3Config: fc.anything(), webhook: fc.oneof(fc.string(), fc.webUrl(), fc.integer()) }, { requiredKeys: [] }).map((v) => JSON.stringify(v)) },
  { weight: 3, arbitrary: json.map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 200 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "{",
      "{not json",
      '{"input":',
      "null",
      "[]",
      '"string"',
      "1e309",
      '{"input":{"n":1e400}}',
      '{"input":{"n":-0}}',
      '{"input":{"n":123456789012345678901234567890}}',
      '{"input":{},"policy":{"ttl":1e999,"executionTimeout":-1e308}}',
      '{"input":{},"policy":{"ttl":10000.5}}',
      '{"input":{"s":"\\ud800"}}',
      '{"input":{"__proto__":{"polluted":true}}}',
      '{"input":{},"__proto__":{"x":1}}',
      '{"input":{"a":1},"input":[1]}',
      '{"ms":1e15}',
      '{"ms":-1}',
      '{"name":"n","size":1e10}',
      "\uFEFF{}",
      "\u0000",
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(20, 500, 5000).chain((d) => fc.boolean().map((o) => `{"input":{"deep":${nested(d, o)}}}`)) },
);

const contentType = fc.constantFrom(undefined, "application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/problem+json", "application/json; charset=utf-16", "garbage/;;;");
const authorization = fc.oneof(
  { weight: 6, arbitrary: fc.constant("Bearer test-key") },
  { weight: 1, arbitrary: fc.constantFrom("test-key", "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "bearer test-key") },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).filter((s) => /^[\x20-\x7e]*$/.test(s)) },
);
const extraHeaders = fc.dictionary(
  fc.constantFrom("accept", "x-request-id", "content-length", "transfer-encoding", "x-minipod-control-key", "if-none-match", "cookie"),
  fc.string({ maxLength: 20 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
  { maxKeys: 2 },
);

interface Case {
  method: string;
  path: string;
  body: string | undefined;
  headers: Record<string, string>;
}

async function macrotasks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe("fuzzing every route of the app", () => {
  let e: InProcess;
  let errors: string[];
  let templates: string[];
  beforeAll(async () => {
    errors = [];
    e = await inProcess({ config: CONFIG, logLevel: "error", log: (line) => errors.push(line) });
    const doc = (await e.get("/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    templates = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)).filter((t) => !EXCLUDED.has(t));
    expect(templates.length).toBeGreaterThan(40);
  });
  afterAll(() => e.close());

  /** Sends one case; a request held on the manual clock is released by moving the clock on. */
  async function send(c: Case): Promise<Reply> {
    const pending = e.request(c.method, c.path, c.body, c.headers);
    for (let round = 0; round < 5; round++) {
      const done = await Promise.race([pending.then(() => true), macrotasks(3).then(() => false)]);
      if (done) break;
      await e.advance(300_000);
    }
    return pending;
  }

  it("answers every request with a status below 500, errors as problem+json, and keeps answering", async () => {
    const target = fc.oneof(
      { weight: 5, arbitrary: fc.nat().chain((i) => fc.array(segment, { minLength: 4, maxLength: 4 }).map((ids) => ({ i, ids }))) },
      { weight: 1, arbitrary: fc.array(segment, { maxLength: 6 }).map((segs) => ({ i: -1, ids: segs })) },
    );
    const cases: fc.Arbitrary<Case> = fc
      .record({ target, method: fc.constantFrom(...METHODS), keepMethod: fc.boolean(), query, body, contentType, authorization, extra: extraHeaders })
      .map(({ target, method, keepMethod, query, body, contentType, authorization, extra }) => {
        let path: string;
        let m = method;
        if (target.i >= 0) {
          const [tMethod, template] = templates[target.i % templates.length]!.split(" ") as [string, string];
          let k = 0;
          path = template.replace(/\{[^}]+\}/g, () => target.ids[k++] || "x");
          if (keepMethod) m = tMethod;
        } else {
          path = "/" + target.ids.join("/");
        }
        const headers: Record<string, string> = { ...extra, authorization };
        if (contentType) headers["content-type"] = contentType;
        return { method: m, path: path + query, body: m === "GET" || m === "HEAD" || m.toUpperCase() === "GET" ? undefined : body, headers };
      });

    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        errors.length = 0;
        const res = await send(c);
        const where = `${c.method} ${c.path.slice(0, 120)} -> ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, where).toBeLessThan(500);
        expect(res.status, where).toBeGreaterThanOrEqual(200);
        if (res.status >= 400 && c.method !== "HEAD") {
          expect(res.headers.get("content-type"), where).toContain("application/problem+json");
          expect(res.body, where).toEqual(expect.objectContaining({ title: expect.any(String), status: res.status, detail: expect.any(String) }));
          if (res.body.errors !== undefined) expect(res.body.errors.every((x: unknown) => typeof x === "string"), where).toBe(true);
        }
        expect(errors, where).toEqual([]);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 400), interruptAfterTimeLimit: 20_000 },
    );

    // Still serving, and still consistent.
    const run = await e.post("/v2/echo/run", { input: { after: "fuzz" } });
    expect(run.status).toBe(200);
    await e.advance(0);
    expect((await e.get(`/v2/echo/status/${run.body.id}`)).body).toMatchObject({ status: "COMPLETED", output: { after: "fuzz" } });
    expect((await e.get("/v2/echo/health")).status).toBe(200);
    expect(errors).toEqual([]);
  });

  it("refuses an oversized body with 413 problem+json and goes on", async () => {
    const big = JSON.stringify({ input: { pad: "x".repeat(10 * 1024 * 1024) } });
    const res = await e.request("POST", "/v2/echo/run", big);
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body).toMatchObject({ title: "Payload Too Large", status: 413 });
    expect((await e.post("/v2/echo/run", { input: {} })).status).toBe(200);
  });
});
