import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXECUTION_TIMEOUT_MAX_MS, EXECUTION_TIMEOUT_MIN_MS, TTL_MAX_MS, TTL_MIN_MS } from "../../src/domain/limits.js";
import { inProcess, type InProcess, type Reply } from "../support/in-process.js";

/** Body locations (`$`, `$.policy.ttl`, `$["a b"]`) or parameter locations, then a message. */
const ENTRY = /^(\$(\.[A-Za-z_$][\w$]*|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*|query\.\w+|path\.\w+): \S.*$/;

const policy = fc.record(
  {
    executionTimeout: fc.integer({ min: EXECUTION_TIMEOUT_MIN_MS, max: EXECUTION_TIMEOUT_MAX_MS }),
    ttl: fc.integer({ min: TTL_MIN_MS, max: TTL_MAX_MS }),
    lowPriority: fc.boolean(),
  },
  { requiredKeys: [] },
);
const s3Config = fc.record(
  { accessId: fc.string(), accessSecret: fc.string(), bucketName: fc.string(), endpointUrl: fc.string(), objectPath: fc.string() },
  { requiredKeys: ["accessId", "accessSecret", "bucketName", "endpointUrl"] },
);
const validBody = fc.record(
  { input: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }), webhook: fc.webUrl(), policy, s3Config },
  { requiredKeys: ["input"] },
);

type Body = Record<string, unknown>;
/** One way to break a valid body, and the location its error must name. */
interface Breakage {
  location: string;
  apply: (b: Body) => unknown;
}
const notAnObject = fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.string(), fc.double(), fc.boolean(), fc.constant(null));
const notAnInteger = fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.double({ noInteger: true }), fc.array(fc.integer(), { maxLength: 2 }));
const notABoolean = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }));
const notAString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }));
const withPolicy = (b: Body, field: string, value: unknown) => ({ ...b, policy: { ...((b.policy as Body) ?? {}), [field]: value } });
const validS3 = { accessId: "id", accessSecret: "secret", bucketName: "bucket", endpointUrl: "https://s3.example.test" };

const breakage: fc.Arbitrary<Breakage> = fc.oneof(
  fc.constant<Breakage>({ location: "$", apply: ({ input: _input, ...rest }) => rest }),
  notAnObject.map<Breakage>((v) => ({ location: "$.input", apply: (b) => ({ ...b, input: v }) })),
  fc.oneof(fc.string().filter((s) => !URL.canParse(s)), notAString).map<Breakage>((v) => ({ location: "$.webhook", apply: (b) => ({ ...b, webhook: v }) })),
  notAnObject.map<Breakage>((v) => ({ location: "$.policy", apply: (b) => ({ ...b, policy: v }) })),
  fc
    .oneof(fc.integer({ min: -1e9, max: EXECUTION_TIMEOUT_MIN_MS - 1 }), fc.integer({ min: EXECUTION_TIMEOUT_MAX_MS + 1, max: 2 ** 52 }), notAnInteger)
    .map<Breakage>((v) => ({ location: "$.policy.executionTimeout", apply: (b) => withPolicy(b, "executionTimeout", v) })),
  fc
    .oneof(fc.integer({ min: -1e9, max: TTL_MIN_MS - 1 }), fc.integer({ min: TTL_MAX_MS + 1, max: 2 ** 52 }), notAnInteger)
    .map<Breakage>((v) => ({ location: "$.policy.ttl", apply: (b) => withPolicy(b, "ttl", v) })),
  notABoolean.map<Breakage>((v) => ({ location: "$.policy.lowPriority", apply: (b) => withPolicy(b, "lowPriority", v) })),
  notAnObject.map<Breakage>((v) => ({ location: "$.s3Config", apply: (b) => ({ ...b, s3Config: v }) })),
  fc
    .tuple(fc.constantFrom("accessId", "accessSecret", "bucketName", "endpointUrl"), fc.option(notAString, { nil: undefined }))
    .map<Breakage>(([field, v]) => ({
      location: v === undefined ? "$.s3Config" : `$.s3Config.${field}`,
      apply: (b) => ({ ...b, s3Config: { ...validS3, [field]: v } }),
    })),
);

function expectValidationProblem(res: Reply, location: string) {
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ title: "Bad Request", status: 400, detail: expect.any(String) });
  const errors = res.body.errors as string[];
  expect(errors.length).toBeGreaterThan(0);
  for (const entry of errors) expect(entry).toMatch(ENTRY);
  expect(errors.some((e) => e.startsWith(`${location}: `) || e.startsWith(`${location}.`) || e.startsWith(`${location}[`)), JSON.stringify(errors)).toBe(true);
}

describe("submission validation (properties)", () => {
  let e: InProcess;
  beforeAll(async () => {
    // No worker, so jobs only queue; no rate limits, so hundreds of submissions in one virtual instant pass.
    e = await inProcess({ config: { endpoints: [{ id: "q", handler: "echo", workersMin: 0, workersMax: 0 }], rateLimits: { enabled: false } } });
  });
  afterAll(() => e.close());

  it("accepts every valid body on /run with 200 and IN_QUEUE", async () => {
    await fc.assert(
      fc.asyncProperty(validBody, async (body) => {
        const res = await e.post("/v2/q/run", body);
        expect(res.status, res.text).toBe(200);
        expect(res.body).toEqual({ id: expect.any(String), status: "IN_QUEUE" });
      }),
      { numRuns: 200 },
    );
  });

  it("refuses every body broken in one place with 400 and errors[] naming that place", async () => {
    await fc.assert(
      fc.asyncProperty(validBody, breakage, async (body, broken) => {
        expectValidationProblem(await e.post("/v2/q/run", broken.apply(body)), broken.location);
      }),
      { numRuns: 300 },
    );
  });

  it("answers any JSON body, or any text at all, with 200 or a 4xx problem, never 5xx", async () => {
    const text = fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)), fc.constantFrom("", "{", "[]", "null", '{"input":{}', "\u0000"));
    await fc.assert(
      fc.asyncProperty(text, async (raw) => {
        const res = await e.request("POST", "/v2/q/run", raw);
        expect([200, 400], res.text).toContain(res.status);
        if (res.status === 400) {
          expect(res.headers.get("content-type")).toBe("application/problem+json");
          for (const entry of res.body.errors ?? []) expect(entry).toMatch(ENTRY);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("refuses a bad /runsync wait in the query with its location", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.integer({ max: 999 }), fc.integer({ min: 300_001 }), fc.constantFrom("x", "1.5", "")), async (wait) => {
        const res = await e.post(`/v2/q/runsync?wait=${encodeURIComponent(String(wait))}`, { input: {} });
        expectValidationProblem(res, "query.wait");
      }),
      { numRuns: 50 },
    );
  });
});
