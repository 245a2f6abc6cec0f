import { request as httpRequest } from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EmulatorOptions } from "../../../src/compose/emulator.js";
import { JSON_DEPTH_MAX, QUEUE_RATE_LIMITS, RUN_PAYLOAD_MAX_BYTES, RUNSYNC_PAYLOAD_MAX_BYTES } from "../../../src/domain/limits.js";
import { API_KEY } from "../../support/in-process.js";
import type { QueueClient, QueueReply, QueueTransport } from "./transport.js";

/**
 * The queue's HTTP behaviour, one suite run against each transport (the model is Hono's
 * `src/router/common.case.test.ts`): in process through `app.request`, where the Hono app answers
 * everything, and over a real socket, where POST /run and GET /status are answered by
 * their fast entries (src/http/fast-routes.ts) whenever those take them. A case that cannot apply to one
 * transport is skipped by name, saying why. test/e2e/direct-routes.test.ts compares the two
 * paths request by request; this suite holds both to the same expectations.
 */
export function queueCases(t: QueueTransport): void {
  /** Who answers a plain POST /run or GET /status on this transport. */
  const fast = t.fastPath ? "direct" : "app";
  let e: QueueClient;
  const start = async (options: EmulatorOptions) => (e = await t.start(options));

  describe("queue operations", () => {
    const config = {
      endpoints: [
        { id: "echo", handler: "echo" as const, workersMin: 1, workersMax: 2, coldStartMs: 1000 },
        { id: "work", handler: "scripted" as const, workersMin: 0, workersMax: 1, coldStartMs: 2000, idleTimeout: 5 },
      ],
    };
    beforeEach(() => start({ config }));
    afterEach(() => e.close());

    it("runs a job from /run to COMPLETED with the real envelope", async () => {
      const run = await e.post("/v2/echo/run", { input: { hello: "world" } });
      expect(run.status).toBe(200);
      expect(run.answeredBy).toBe(fast);
      expect(run.body).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]+$/), status: "IN_QUEUE" });
      await e.advance(0);
      const status = await e.get(`/v2/echo/status/${run.body.id}`);
      expect(status.status).toBe(200);
      expect(status.answeredBy).toBe(fast);
      expect(status.body).toEqual({
        id: run.body.id,
        status: "COMPLETED",
        delayTime: 0,
        executionTime: 0,
        output: { hello: "world" },
        workerId: expect.stringMatching(/^[a-z0-9]{14}$/),
      });
    });

    it("answers /status as JSON that follows the job: a queued job's delayTime grows, a finished job's answer changes with it", async () => {
      const id = (await e.post("/v2/work/run", { input: { fail: "boom", sleepMs: 10 } })).body.id;
      const text = async () => {
        const res = await e.get(`/v2/work/status/${id}`, { authorization: "Bearer k" });
        expect(res.answeredBy).toBe(fast);
        expect(res.headers.get("content-type")).toBe("application/json");
        return res.text;
      };
      const queued = await text();
      await e.advance(500);
      expect(JSON.parse(await text())).toMatchObject({ status: "IN_QUEUE", delayTime: JSON.parse(queued).delayTime + 500 });
      await e.advance(2010);
      const failed = await text();
      expect(JSON.parse(failed)).toMatchObject({ status: "FAILED", error: "boom", delayTime: 2000, executionTime: 10 });
      expect(await text()).toBe(failed);
      await e.post(`/v2/work/retry/${id}`);
      expect(JSON.parse(await text())).toMatchObject({ status: "IN_PROGRESS", retries: 1 });
      await e.advance(10);
      expect(JSON.parse(await text())).toMatchObject({ status: "FAILED", retries: 1, executionTime: 10 });
    });

    it.skipIf(t.socket)("answers GET /status and /health in the turn the request arrives, journal and all (in process only: the app's fetch is what answers without a promise)", async () => {
      const id = (await e.post("/v2/echo/run", { input: { n: 1 } })).body.id;
      await e.advance(1000);
      const get = (path: string) => e.appFetch!(new Request(`http://minipod.test${path}`, { headers: { authorization: "Bearer k" } }));
      for (const path of [`/v2/echo/status/${id}`, "/v2/echo/health"]) {
        const res = get(path);
        expect(res, path).toBeInstanceOf(Response);
        expect((res as Response).status).toBe(200);
      }
      expect((await e.get(`/_emulator/requests?operation=status`)).body.requests).toContainEqual(expect.objectContaining({ path: `/v2/echo/status/${id}`, status: 200 }));
      // An unknown job is answered at once too.
      expect(get(`/v2/echo/status/nope`)).toBeInstanceOf(Response);
      expect(((await (get("/v2/echo/status/nope") as Response).json()) as { status: number }).status).toBe(404);
    });

    it("journals /run and /status as they were answered, whoever answered them", async () => {
      const id = (await e.post("/v2/echo/run", { input: { n: 1 } })).body.id;
      await e.get(`/v2/echo/status/${id}`);
      await e.get("/v2/echo/status/nope");
      const journal = (await e.get("/_emulator/requests?endpoint=echo")).body.requests as Array<{ method: string; path: string; operation: string; status: number }>;
      expect(journal.map((r) => [r.method, r.path, r.operation, r.status])).toEqual([
        ["POST", "/v2/echo/run", "run", 200],
        ["GET", `/v2/echo/status/${id}`, "status", 200],
        ["GET", "/v2/echo/status/nope", "status", 404],
      ]);
    });

    it("answers /runsync with a sync- id and the output", async () => {
      const res = await e.post("/v2/echo/runsync", { input: { n: 1 } });
      expect(res.status).toBe(200);
      expect(res.answeredBy).toBe(fast);
      expect(res.body.id).toMatch(/^sync-[A-Za-z0-9_-]+$/);
      expect(res.body).toMatchObject({ status: "COMPLETED", output: { n: 1 } });
    });

    it("holds /runsync on the virtual clock and answers with the current status when the wait ends", async () => {
      const timers = await e.pendingTimers();
      const pending = e.post("/v2/work/runsync?wait=5000", { input: { sleepMs: 60_000 } });
      let answered = false;
      void pending.then(() => (answered = true));
      await e.untilTimers(timers + 2); // the worker's cold start, and the hold
      await e.advance(4999);
      expect(answered).toBe(false);
      await e.advance(1);
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: "IN_PROGRESS", delayTime: 2000 });
    });

    it("refuses bad input with 400 problem+json naming each field", async () => {
      const res = await e.post("/v2/echo/run", { input: [1], policy: { ttl: "x", executionTimeout: 10 } });
      expect(res.status).toBe(400);
      expect(res.answeredBy).toBe(fast);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.body.errors).toEqual(
        expect.arrayContaining(["$.input: expected object", "$.policy.ttl: expected integer", "$.policy.executionTimeout: expected number >= 5000"]),
      );
      const missing = await e.post("/v2/echo/run", {});
      expect(missing.body.errors).toEqual(["$: expected required property input to be present"]);
      const broken = await e.request("POST", "/v2/echo/run", "{not json");
      expect(broken.status).toBe(400);
      expect(broken.answeredBy).toBe(fast);
      expect(broken.body.detail).toMatch(/not valid JSON/);
    });

    it("refuses misspelt policy and s3Config keys, and drops unknown top-level ones as the service documents", async () => {
      const policy = await e.post("/v2/echo/run", { input: {}, policy: { executionTimout: 5000 } });
      expect(policy.status).toBe(400);
      expect(policy.answeredBy).toBe(fast);
      expect(policy.body.errors).toEqual([expect.stringMatching(/^\$\.policy: .*executionTimout/)]);
      const s3 = await e.post("/v2/echo/run", { input: {}, s3Config: { accessId: "a", accessSecret: "s", bucketName: "b", endpointUrl: "https://s3.example", region: "x" } });
      expect(s3.status).toBe(400);
      expect(s3.body.errors).toEqual([expect.stringMatching(/^\$\.s3Config: .*region/)]);
      // "If a key is passed in at the top level and not included in the body of your request, it
      // will be discarded": accepted, and the handler does not see it.
      const extra = await e.post("/v2/echo/runsync", { input: { a: 1 }, prompt: "top level" });
      expect(extra.body).toMatchObject({ status: "COMPLETED", output: { a: 1 } });
    });

    it("answers 404 problem+json for unknown endpoints, jobs and routes", async () => {
      for (const path of ["/v2/nope/health", "/v2/echo/status/unknown-id", "/v2/nope/status/unknown-id", "/v2/echo/nothing-here"]) {
        const res = await e.get(path);
        expect(res.status, path).toBe(404);
        expect(res.body).toMatchObject({ title: "Not Found", status: 404, detail: expect.any(String) });
      }
    });
  });

  describe("errors are problem+json everywhere", () => {
    const config = {
      endpoints: [{ id: "echo", handler: "echo" as const, workersMin: 1, workersMax: 1 }],
      auth: { keys: [{ key: API_KEY }, { key: "reader", scopes: ["queue:read" as const] }] },
      rateLimits: { rest: { minute: 1000 } },
    };
    beforeEach(() => start({ config }));
    afterEach(() => e.close());

    /** The ErrorResponse of the specification, nothing else. */
    function expectProblem(res: QueueReply, status: number, title: string) {
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body).toEqual({ title, status, detail: expect.any(String), ...(res.body?.errors ? { errors: expect.any(Array) } : {}) });
      expect(res.body.detail.length).toBeGreaterThan(0);
    }

    it("answers unknown routes with 404, inside and outside the service surfaces", async () => {
      for (const path of ["/v2/echo/nothing-here", "/v2/echo", "/v2", "/v1/unknown", "/v2/pods/abc/def", "/nowhere", "/_emulator/nothing"]) {
        const res = await e.get(path);
        expectProblem(res, 404, "Not Found");
        expect(res.body.detail, path).toContain(path);
      }
    });

    it("answers a known path with the wrong method 405 with Allow", async () => {
      const cases: Array<[string, string, string]> = [
        ["DELETE", "/v2/echo/run", "POST"],
        ["GET", "/v2/echo/runsync", "POST"],
        ["POST", "/v2/echo/status/abc", "GET, HEAD"],
        ["PUT", "/v2/echo/health", "GET, HEAD"],
        ["POST", "/_emulator/clock", "GET, HEAD"],
      ];
      for (const [method, path, allow] of cases) {
        const res = await e.request(method, path, method === "GET" ? undefined : {});
        expectProblem(res, 405, "Method Not Allowed");
        expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
        expect(res.body.detail).toBe(`${method} is not allowed on ${path}; it accepts ${allow}`);
      }
    });

    it("checks the key before the route: 401 and 403 come first", async () => {
      expectProblem(await e.get("/v2/echo/nothing-here", { authorization: "" }), 401, "Unauthorized");
      expectProblem(await e.request("DELETE", "/v2/echo/run", undefined, { authorization: "Basic abc" }), 401, "Unauthorized");
      const forbidden = await e.post("/v2/echo/run", { input: {} }, { authorization: "Bearer reader" });
      expectProblem(forbidden, 403, "Forbidden");
      expect(forbidden.answeredBy).toBe(fast);
      const unknown = await e.get("/v2/echo/status/abc", { authorization: "Bearer nobody" });
      expectProblem(unknown, 401, "Unauthorized");
      expect(unknown.answeredBy).toBe(fast);
    });

    it("answers 400 with errors[] for invalid bodies, queries and JSON", async () => {
      const body = await e.post("/v2/echo/run", { input: {}, policy: { ttl: 5 } });
      expectProblem(body, 400, "Bad Request");
      expect(body.body.errors).toEqual(["$.policy.ttl: expected number >= 10000"]);
      const query = await e.post("/v2/echo/runsync?wait=abc", { input: {} });
      expectProblem(query, 400, "Bad Request");
      expect(query.body.errors).toEqual(["query.wait: expected integer"]);
      expectProblem(await e.request("POST", "/v2/echo/run", "{oops"), 400, "Bad Request");
    });

    it("answers 413 for a body declared over the limit", async () => {
      expectProblem(await e.declared("/v2/echo/run", RUN_PAYLOAD_MAX_BYTES + 1), 413, "Payload Too Large");
    });

    it("answers 429 with Retry-After", async () => {
      for (let i = 0; i < 2; i++) await e.post("/v2/echo/purge-queue");
      const res = await e.post("/v2/echo/purge-queue");
      expectProblem(res, 429, "Too Many Requests");
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    });
  });

  describe("authentication", () => {
    const endpoints = [{ id: "echo", handler: "echo" as const, workersMin: 1, workersMax: 1 }];
    const keys = [
      { key: "full-key" },
      { key: "reader", scopes: ["queue:read" as const, "rest:read" as const] },
      { key: "submitter", scopes: ["queue:write" as const] },
      { key: "worker-key", scopes: ["worker" as const] },
      { key: "nothing", scopes: [] },
    ];
    afterEach(() => e.close());

    /** A request with exactly these headers (the client would add its own key), a JSON body if any. */
    const raw = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
      body === undefined ? e.raw(method, path, headers) : e.raw(method, path, { ...headers, "content-type": "application/json" }, JSON.stringify(body));

    it("answers 401 problem+json for a missing, malformed or unknown key on every service route", async () => {
      await start({ config: { endpoints, auth: { keys } } });
      const cases: Array<[string, string, Record<string, string>, RegExp]> = [
        ["POST", "/v2/echo/run", {}, /missing API key/],
        ["GET", "/v2/echo/status/abc", {}, /missing API key/],
        ["GET", "/v2/network-volumes", {}, /^missing bearer token; minipod accepts the keys listed in auth\.keys of its config$/],
        ["GET", "/v1/endpoints", {}, /^missing bearer token; /],
        ["GET", "/v2/echo/health", { authorization: "Basic dXNlcjpwYXNz" }, /malformed Authorization header/],
        ["GET", "/v2/echo/health", { authorization: "Bearer" }, /malformed/],
        ["GET", "/v2/echo/health", { authorization: "Bearer   " }, /malformed/],
        ["GET", "/v2/echo/health", { authorization: "Bearer two words" }, /malformed/],
        ["POST", "/v2/echo/run", { authorization: "Bearer two words" }, /malformed/],
        ["GET", "/v2/echo/health", { authorization: "Bearer wrong-key" }, /^invalid API key: /],
        ["GET", "/v2/echo/health", { authorization: "wrong-key" }, /^invalid API key: /],
        ["GET", "/v2/echo/status/abc", { authorization: "wrong-key" }, /^invalid API key: /],
        ["GET", "/v2/pods", { authorization: "full-key" }, /malformed Authorization header: expected "Bearer <API key>"; /],
        ["GET", "/v2/echo/nothing-here", {}, /missing API key/],
      ];
      for (const [method, path, headers, detail] of cases) {
        const res = await raw(method, path, headers, method === "POST" ? { input: {} } : undefined);
        const what = `${method} ${path} ${JSON.stringify(headers)}`;
        expect(res.status, what).toBe(401);
        expect(res.headers.get("content-type"), what).toBe("application/problem+json");
        expect(res.headers.get("www-authenticate"), what).toMatch(/^Bearer realm="minipod"/);
        expect(res.body, what).toEqual({ title: "Unauthorized", status: 401, detail: expect.stringMatching(detail) });
        expect(res.headers.get("ratelimit"), what).toBeNull();
      }
    });

    it("accepts Bearer keys everywhere and the bare key on queue operations, never echoing the key", async () => {
      await start({ config: { endpoints, auth: { keys } } });
      const bearer = await raw("POST", "/v2/echo/run", { authorization: "Bearer full-key" }, { input: { a: 1 } });
      expect(bearer.status).toBe(200);
      expect(bearer.answeredBy).toBe(fast);
      const lower = await raw("GET", `/v2/echo/status/${String(bearer.body.id)}`, { authorization: "bearer full-key" });
      expect(lower.status).toBe(200);
      const bare = await raw("GET", `/v2/echo/status/${String(bearer.body.id)}`, { authorization: "full-key" });
      expect(bare.status).toBe(200);
      expect(bare.answeredBy).toBe(fast);
      const runsync = await raw("POST", "/v2/echo/runsync", { authorization: "full-key" }, { input: { b: 2 } });
      expect(runsync.body).toMatchObject({ status: "COMPLETED", output: { b: 2 } });
      const unknown = await raw("GET", "/v2/echo/health", { authorization: "Bearer secret-guess-123" });
      expect(JSON.stringify(unknown.body)).not.toContain("secret-guess-123");
      const unknownStatus = await raw("GET", `/v2/echo/status/${String(bearer.body.id)}`, { authorization: "Bearer secret-guess-123" });
      expect(unknownStatus.text).not.toContain("secret-guess-123");
    });

    it("answers 403 when the key's scopes do not cover the route", async () => {
      await start({ config: { endpoints, auth: { keys } } });
      const job = await raw("POST", "/v2/echo/run", { authorization: "Bearer submitter" }, { input: {} });
      expect(job.status).toBe(200);
      const expectations: Array<[string, string, string, number, string?]> = [
        ["reader", "GET", `/v2/echo/status/${String(job.body.id)}`, 200],
        ["reader", "GET", "/v2/echo/health", 200],
        ["reader", "POST", "/v2/echo/run", 403, "queue:write"],
        ["reader", "POST", "/v2/echo/purge-queue", 403, "queue:write"],
        ["reader", "GET", "/v2/network-volumes", 404],
        ["reader", "POST", "/v2/network-volumes", 403, "rest:write"],
        ["submitter", "GET", `/v2/echo/status/${String(job.body.id)}`, 403, "queue:read"],
        ["submitter", "POST", `/v2/echo/cancel/${String(job.body.id)}`, 200],
        ["submitter", "GET", "/v2/echo/health", 403, "queue:read"],
        ["submitter", "GET", "/v1/endpoints", 403, "rest:read"],
        ["worker-key", "GET", "/v2/echo/job-take/w1", 404],
        ["worker-key", "GET", "/v2/echo/health", 403, "queue:read"],
        ["worker-key", "POST", "/v2/echo/run", 403, "queue:write"],
        ["submitter", "GET", "/v2/echo/job-take/w1", 403, "worker"],
        ["nothing", "GET", "/v2/echo/health", 403, "queue:read"],
        ["nothing", "GET", "/v1/pods", 403, "rest:read"],
        ["full-key", "GET", "/v2/echo/health", 200],
      ];
      for (const [key, method, path, status, scope] of expectations) {
        const res = await raw(method, path, { authorization: `Bearer ${key}` }, method === "POST" ? {} : undefined);
        const what = `${key} ${method} ${path}`;
        if (status === 404) expect(res.status, what).not.toBe(403); // a route another part of minipod serves
        else expect(res.status, what).toBe(status);
        if (status === 403) {
          expect(res.headers.get("content-type"), what).toBe("application/problem+json");
          expect(res.body, what).toEqual({ title: "Forbidden", status: 403, detail: expect.stringContaining(`"${scope}"`) });
        }
      }
    });

    it("accepts any non-empty key when none is configured", async () => {
      await start({ config: { endpoints } });
      expect((await e.get("/v2/echo/health", { authorization: "Bearer anything-at-all" })).status).toBe(200);
      expect((await e.get("/v2/echo/health", { authorization: "whatever" })).status).toBe(200);
      const run = await raw("POST", "/v2/echo/run", { authorization: "whatever" }, { input: {} });
      expect(run.status).toBe(200);
      expect(run.answeredBy).toBe(fast);
      expect((await raw("GET", `/v2/echo/status/${String(run.body.id)}`, { authorization: "Bearer another" })).status).toBe(200);
      expect((await raw("GET", "/v2/echo/health")).status).toBe(401);
      expect((await raw("GET", "/v2/echo/health", { authorization: "Bearer " })).status).toBe(401);
      expect((await raw("GET", `/v2/echo/status/${String(run.body.id)}`)).status).toBe(401);
    });

    it("leaves the emulator's own routes open", async () => {
      await start({ config: { endpoints, auth: { keys } } });
      for (const path of ["/_emulator/clock", "/openapi.json"]) expect((await raw("GET", path)).status, path).toBe(200);
      expect((await raw("POST", "/_emulator/clock/advance", {}, { ms: 5 })).status).toBe(200);
      // Not a service route: a 404 for an unknown path outside /v1 and /v2 needs no key.
      expect((await raw("GET", "/nowhere")).status).toBe(404);
    });
  });

  describe("hints", () => {
    beforeAll(() => start({ config: { endpoints: [{ id: "echo" }, { id: "gpu", handler: "external" }] } }));
    afterAll(() => e.close());

    /** Every route of /openapi.json that takes a body, with its parameters filled in. */
    async function bodyRoutes(): Promise<Array<{ method: string; path: string; url: string }>> {
      const doc = (await e.get("/openapi.json")).body as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
      return Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops)
          .filter(([, op]) => op.requestBody !== undefined)
          .map(([method, _op]) => ({
            method: method.toUpperCase(),
            path,
            url: path.replace("{endpoint_id}", path.includes("job-") ? "gpu" : "echo").replace(/\{[^}]+\}/g, "x1") + (path.includes("/job-") ? "?jobId=x1" : ""),
          })),
      );
    }

    it("answers a body that is not JSON with what that route takes: an input on the routes that submit a job, and only there", async () => {
      const routes = await bodyRoutes();
      expect(routes.length).toBeGreaterThan(15);
      const hints: Record<string, string> = {};
      for (const r of routes) {
        const res = await e.request(r.method, r.url, "{not json", { "content-type": "application/json" });
        expect(res.status, `${r.method} ${r.path}`).toBe(400);
        if (r.path === "/v2/{endpoint_id}/run") expect(res.answeredBy).toBe(fast);
        // The OpenAI routes answer with OpenAI's error object, whose message is the detail.
        if (r.path.includes("/openai/")) res.body = { detail: res.body.error?.message };
        expect(res.body.detail, `${r.method} ${r.path}`).toMatch(/^the request body is not valid JSON; send /);
        hints[`${r.method} ${r.path}`] = res.body.detail;
        // A change of one batch request takes a /run body too.
        const submits = /\/(run|runsync)$|\/batch\/\{batch_id\}\/requests\/\{request_id\}$/.test(r.path);
        expect(res.body.detail.includes('"input"'), `${r.method} ${r.path}: ${res.body.detail}`).toBe(submits);
      }
      expect(hints).toMatchObject({
        "POST /v2/{endpoint_id}/run": 'the request body is not valid JSON; send a JSON object such as {"input": {...}}',
        "POST /v2/network-volumes": 'the request body is not valid JSON; send a JSON object such as {"name": "...", "size": ..., "dataCenter": "..."}',
        "POST /_emulator/clock/advance": 'the request body is not valid JSON; send a JSON object such as {"ms": ...}',
        "POST /_emulator/faults": 'the request body is not valid JSON; send a JSON object such as {"fault": ...}',
        "POST /v2/{endpoint_id}/job-done/{worker_id}": 'the request body is not valid JSON; send a JSON object such as {"output": ...}',
      });
    });

    it("answers an endpoint that does not exist with the endpoints there are, on the queue and the worker routes", async () => {
      const expected = 'endpoint "ecoh" not found; the endpoints are "echo", "gpu" (add one under "endpoints" in the config, or create it with POST /v1/endpoints)';
      const run = await e.post("/v2/ecoh/run", { input: {} });
      expect(run.body).toMatchObject({ status: 404, detail: expected });
      expect(run.answeredBy).toBe(fast);
      const status = await e.get("/v2/ecoh/status/x");
      expect(status.body).toMatchObject({ status: 404, detail: expected });
      expect(status.answeredBy).toBe(fast);
      expect((await e.get("/v2/ecoh/job-take/w1")).body).toMatchObject({ status: 404, detail: expected });
    });
  });

  describe("queue rate limits", () => {
    const endpoints = [
      { id: "echo", handler: "echo" as const, workersMin: 1, workersMax: 1 },
      { id: "idle", handler: "echo" as const, workersMin: 0, workersMax: 0 },
    ];
    const PURGE = QUEUE_RATE_LIMITS["purge-queue"]!.requests;
    afterEach(() => e.close());

    it("refuses /purge-queue past the table's rate per 10 s with 429 and Retry-After, per endpoint", async () => {
      await start({ clock: { mode: "manual", start: 1_700_000_004_000 }, config: { endpoints } });
      for (let i = 0; i < PURGE; i++) expect((await e.post("/v2/idle/purge-queue")).status).toBe(200);
      const limited = await e.post("/v2/idle/purge-queue");
      expect(limited.status).toBe(429);
      expect(limited.headers.get("content-type")).toBe("application/problem+json");
      expect(limited.headers.get("retry-after")).toBe("6");
      expect(limited.body).toMatchObject({ title: "Too Many Requests", status: 429, detail: expect.stringContaining('/purge-queue on endpoint "idle"') });
      expect(limited.headers.get("ratelimit")).toBeNull();
      expect((await e.post("/v2/echo/purge-queue")).status).toBe(200);
      await e.advance(6000);
      expect((await e.post("/v2/idle/purge-queue")).status).toBe(200);
    });

    it("refuses /run past the table's rate per 10 s with 429, counting /status apart", async () => {
      const run = QUEUE_RATE_LIMITS.run!.requests;
      await start({ clock: { mode: "manual", start: 1_700_000_004_000 }, config: { endpoints } });
      let id = "";
      // In batches (the window counts requests, not their order), to keep the suite quick.
      for (let sent = 0; sent < run; sent += 100) {
        const batch = await Promise.all(Array.from({ length: Math.min(100, run - sent) }, () => e.post("/v2/idle/run", { input: {} })));
        expect(batch.map((r) => r.status)).toEqual(batch.map(() => 200));
        id = batch[0]!.body.id;
      }
      const limited = await e.post("/v2/idle/run", { input: {} });
      expect(limited.status).toBe(429);
      expect(limited.answeredBy).toBe(fast);
      expect(limited.headers.get("content-type")).toBe("application/problem+json");
      expect(limited.headers.get("retry-after")).toBe("6");
      expect(limited.body).toMatchObject({ title: "Too Many Requests", status: 429, detail: expect.stringContaining('/run on endpoint "idle"') });
      expect((await e.post("/v2/echo/run", { input: {} })).status).toBe(200);
      const status = await e.get(`/v2/idle/status/${id}`);
      expect(status.status).toBe(200);
      expect(status.answeredBy).toBe(fast);
      await e.advance(6000);
      expect((await e.post("/v2/idle/run", { input: {} })).status).toBe(200);
    });

    it("raises the rate with running workers × requestsPerWorker", async () => {
      await start({
        config: { endpoints: [{ id: "busy", handler: "scripted", workersMin: 3, workersMax: 3 }], rateLimits: { queue: { requestsPerWorker: 2 } } },
      });
      const purge = async () => (await e.post("/v2/busy/purge-queue")).status;
      for (let i = 0; i < PURGE; i++) expect(await purge()).toBe(200);
      expect(await purge()).toBe(429);
      // Three workers busy with long jobs: the limit becomes 3 × 2 = 6 per window.
      for (let i = 0; i < 3; i++) await e.post("/v2/busy/run", { input: { sleepMs: 600_000 } });
      await e.advance(0);
      expect((await e.get("/v2/busy/health")).body.workers.running).toBe(3);
      for (let i = PURGE; i < 6; i++) expect(await purge()).toBe(200);
      expect(await purge()).toBe(429);
    });

    it("limits held /runsync requests to the table's concurrency and frees slots as they answer", async () => {
      await start({ config: { endpoints } });
      const concurrent = QUEUE_RATE_LIMITS.runsync!.concurrent!;
      const timers = await e.pendingTimers();
      const held = Array.from({ length: concurrent }, () => e.post("/v2/idle/runsync?wait=60000", { input: {} }));
      await e.untilTimers(timers + concurrent); // one hold each
      const over = await e.post("/v2/idle/runsync?wait=60000", { input: {} });
      expect(over.status).toBe(429);
      expect(over.headers.get("retry-after")).toBe("1");
      expect(over.body.detail).toMatch(/concurrency limit exceeded for \/runsync on endpoint "idle": 400 requests at once/);
      // Other operations and endpoints are not held up.
      expect((await e.post("/v2/idle/run", { input: {} })).status).toBe(200);
      expect((await e.post("/v2/echo/runsync", { input: {} })).status).toBe(200);
      await e.advance(60_000);
      const answers = await Promise.all(held);
      expect(answers.every((a) => a.status === 200 && a.body.status === "IN_QUEUE")).toBe(true);
      const again = e.post("/v2/idle/runsync?wait=1000", { input: {} });
      await e.untilTimers(timers + 1);
      await e.advance(1000);
      expect((await again).status).toBe(200);
    });

    it("turns every limit off with rateLimits.enabled false", async () => {
      await start({ config: { endpoints, rateLimits: { enabled: false } } });
      for (let i = 0; i < PURGE * 5; i++) expect((await e.post("/v2/idle/purge-queue")).status).toBe(200);
    });
  });

  describe("payload limits", () => {
    beforeAll(() => start({ config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, workersMax: 1 }] } }));
    afterAll(() => e.close());

    /** A valid submission of exactly `bytes` bytes of JSON. */
    function submissionOf(bytes: number): string {
      const shell = '{"input":{"blob":""}}';
      return `{"input":{"blob":"${"x".repeat(bytes - shell.length)}"}}`;
    }
    const JSON_TYPE = { "content-type": "application/json" };
    const cases = [
      { op: "run", limit: RUN_PAYLOAD_MAX_BYTES, mb: 10 },
      { op: "runsync", limit: RUNSYNC_PAYLOAD_MAX_BYTES, mb: 20 },
    ];

    for (const { op, limit, mb } of cases) {
      it(`refuses a /${op} body declared over ${mb} MB with 413 before reading it`, async () => {
        const res = await e.declared(`/v2/echo/${op}`, limit + 1);
        expect(res.status).toBe(413);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect(res.body).toEqual({ title: "Payload Too Large", status: 413, detail: expect.stringContaining(`${limit} bytes (${mb} MB)`) });
      });

      it.skipIf(!t.socket)(`refuses a streamed /${op} body without Content-Length once it passes ${mb} MB, while reading (needs a socket: a body that never ends)`, async () => {
        const res = await streamForever(e.url!, `/v2/echo/${op}`, limit * 3);
        expect(res.status).toBe(413);
        expect(res.headers["content-type"]).toBe("application/problem+json");
        expect(res.headers["transfer-encoding"] ?? "").not.toBe("chunked"); // a whole problem body
        expect(res.body).toMatchObject({ title: "Payload Too Large", status: 413 });
        // Answered long before the client would have finished (it never ends the request at all).
        expect(res.sentBeforeAnswer).toBeGreaterThan(limit);
        expect(res.sentBeforeAnswer).toBeLessThan(limit * 3);
      });
    }

    it("accepts a body of exactly the limit", async () => {
      const body = submissionOf(RUN_PAYLOAD_MAX_BYTES);
      expect(Buffer.byteLength(body)).toBe(RUN_PAYLOAD_MAX_BYTES);
      const res = await e.request("POST", "/v2/echo/run", body, JSON_TYPE);
      expect(res.status).toBe(200);
      expect(res.answeredBy).toBe(fast);
      expect(res.body).toMatchObject({ status: "IN_QUEUE" });
      // The same bytes are over the limit for nothing smaller: /runsync takes twice as much.
      expect((await e.request("POST", "/v2/echo/runsync", submissionOf(RUN_PAYLOAD_MAX_BYTES + 1), JSON_TYPE)).status).toBe(200);
      const over = await e.request("POST", "/v2/echo/run", submissionOf(RUN_PAYLOAD_MAX_BYTES + 1), JSON_TYPE);
      expect(over.status).toBe(413);
    });

    /** A submission whose body nests `levels` levels of objects, or of arrays within `input`, the body itself counted. */
    const nestedSubmission = (levels: number, inObject: boolean) => {
      let inner = inObject ? "{}" : "[]";
      for (let i = inObject ? 2 : 3; i < levels; i++) inner = inObject ? `{"a":${inner}}` : `[${inner}]`;
      return `{"input":${inObject ? inner : `{"deep":${inner}}`}}`;
    };

    it(`refuses bodies nested more than ${JSON_DEPTH_MAX} levels deep with 400, and runs one nested exactly so`, async () => {
      const health = async () => (await e.get("/v2/echo/health")).body.jobs as Record<string, number>;
      const before = await health();
      await e.request("DELETE", "/_emulator/requests");
      for (const op of ["run", "runsync"]) {
        for (const levels of [JSON_DEPTH_MAX + 1, 5_000, 100_000]) {
          for (const inObject of [false, true]) {
            const res = await e.raw("POST", `/v2/echo/${op}`, { authorization: `Bearer ${API_KEY}` }, nestedSubmission(levels, inObject));
            expect(res.status, `${op} ${levels} ${inObject}`).toBe(400);
            expect(res.body).toMatchObject({ status: 400, detail: expect.stringContaining(`more than ${JSON_DEPTH_MAX} levels deep`) });
          }
        }
      }
      expect(await health()).toEqual(before);
      // The journal keeps refused requests too, but not bodies too deep to store.
      const journaled = ((await e.get("/_emulator/requests?status=400")).body.requests as Array<{ body: unknown }>).map((r) => r.body);
      expect(journaled.filter((b) => b === `[nested more than ${JSON_DEPTH_MAX} levels, not kept]`)).toHaveLength(8);

      const body = nestedSubmission(JSON_DEPTH_MAX, true);
      const ok = await e.raw("POST", "/v2/echo/run", { authorization: `Bearer ${API_KEY}` }, body);
      expect(ok.status).toBe(200);
      await e.advance(0);
      const view = (await e.get(`/v2/echo/status/${ok.body.id}`)).body as { status: string; output: unknown };
      expect(view.status).toBe("COMPLETED");
      expect(view.output).toEqual((JSON.parse(body) as { input: unknown }).input);
    });
  });
}

/**
 * POSTs a body with node's http client, streamed in chunks (chunked encoding, no Content-Length):
 * the opening of a JSON object, then filler, and the request is never ended, so only a server that
 * refuses while reading can answer. Says how many bytes had been written when the answer came.
 */
function streamForever(url: string, path: string, upTo: number): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any; sentBeforeAnswer: number }> {
  const CHUNK = Buffer.alloc(64 * 1024, "x");
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" } });
    let sent = 0;
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const sentBeforeAnswer = sent;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text), sentBeforeAnswer });
      });
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const pump = () => {
      while (!answered && sent < upTo) {
        const piece = sent === 0 ? Buffer.from('{"input":{"blob":"') : CHUNK;
        sent += piece.length;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
    };
    pump();
  });
}
