import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorization, body, contentType, extraHeaders, METHODS, query, segment } from "../support/arbitraries.js";
import { ServicePaths } from "../../src/http/surfaces.js";
import { REST_V2_COLLECTIONS } from "../../src/services/index.js";

const paths = new ServicePaths(REST_V2_COLLECTIONS);
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
        if (res.status >= 400 && c.method !== "HEAD" && paths.isOpenAi(new URL(`http://minipod.test${c.path}`).pathname)) {
          // The OpenAI routes answer OpenAI's error object, which the OpenAI SDKs read.
          expect(res.headers.get("content-type"), where).toContain("application/json");
          expect(res.body, where).toEqual({
            error: {
              message: expect.any(String),
              type: expect.any(String),
              param: expect.toBeOneOf([null, expect.any(String)]),
              code: expect.toBeOneOf([null, expect.any(String), expect.any(Number)]),
            },
          });
        } else if (res.status === 400 && c.method !== "HEAD" && new URL(`http://minipod.test${c.path}`).pathname === "/graphql") {
          // GraphQL's own error shape, which GraphQL clients read: errors[] of { message, extensions }.
          expect(res.headers.get("content-type"), where).toContain("application/json");
          expect(res.body.errors, where).toEqual(expect.arrayContaining([expect.objectContaining({ message: expect.any(String), extensions: { code: expect.any(String) } })]));
        } else if (res.status >= 400 && c.method !== "HEAD") {
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
