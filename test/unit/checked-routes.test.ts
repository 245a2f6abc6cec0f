import { createRoute, z } from "@hono/zod-openapi";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { EmulatorError } from "../../src/domain/errors.js";
import { jsonBody } from "../../src/http/body.js";
import { JSON_DEPTH_MAX } from "../../src/domain/limits.js";
import { nestsDeeperThan } from "../../src/domain/redact.js";
import { CheckedOpenAPIHono, parseJsonBody, type CheckResult } from "../../src/http/checked-routes.js";
import { problemResponse } from "../../src/http/problem.js";

const Params = z.object({ id: z.string().min(2).openapi({ param: { name: "id", in: "path" } }) });
const Query = z.object({ n: z.coerce.number().int().optional().openapi({ param: { name: "n", in: "query" } }) });
const Body = z.object({ input: z.record(z.string(), z.unknown()) }).strict();

const submit = createRoute({
  method: "post",
  path: "/things/{id}",
  middleware: [jsonBody(64)] as const,
  request: { params: Params, query: Query, body: { required: true, content: { "application/json": { schema: Body } } } },
  responses: { 200: { description: "ok" } },
});

function app() {
  const failures: CheckResult[] = [];
  const a = new CheckedOpenAPIHono({
    onInvalid: (result) => {
      failures.push(result);
      throw new EmulatorError("VALIDATION_FAILED", `bad ${result.target}`);
    },
  });
  a.onError((err, c) => problemResponse(c, err));
  a.openapi(submit, (c) => c.json({ id: c.req.valid("param").id, n: c.req.valid("query").n ?? null, input: c.req.valid("json").input }, 200));
  return { a, failures };
}

const post = (a: { request: (path: string, init: RequestInit) => Response | Promise<Response> }, path: string, body: string, type = "application/json") =>
  a.request(path, { method: "POST", headers: { "content-type": type }, body });

describe("routes checked in their own step", () => {
  it("gives the handler the parsed path, query and body, reading the body as JSON whatever its type", async () => {
    const { a } = app();
    const res = await post(a, "/things/ab?n=7", '{"input":{"x":1}}');
    expect(await res.json()).toEqual({ id: "ab", n: 7, input: { x: 1 } });
    const form = await post(a, "/things/ab", '{"input":{}}', "application/x-www-form-urlencoded");
    expect(await form.json()).toEqual({ id: "ab", n: null, input: {} });
  });

  it("tells onInvalid which part failed, refuses bodies that are not JSON or over the limit, and the route's own hook comes first", async () => {
    const { a, failures } = app();
    expect((await post(a, "/things/a", '{"input":{}}')).status).toBe(400);
    expect((await post(a, "/things/ab?n=x", '{"input":{}}')).status).toBe(400);
    expect((await post(a, "/things/ab", '{"input":{},"extra":1}')).status).toBe(400);
    expect(failures.map((f) => f.target)).toEqual(["param", "query", "json"]);
    const broken = await post(a, "/things/ab", "{nope");
    expect([broken.status, ((await broken.json()) as { detail: string }).detail]).toEqual([400, expect.stringMatching(/not valid JSON/)]);
    expect((await post(a, "/things/ab", JSON.stringify({ input: { big: "x".repeat(100) } }))).status).toBe(413);

    const hooked = new CheckedOpenAPIHono({ onInvalid: () => undefined });
    hooked.openapi(submit, (c) => c.json({}, 200), (result, c) => c.json({ hook: result.target }, 422));
    const res = await post(hooked, "/things/a", "{}");
    expect([res.status, await res.json()]).toEqual([422, { hook: "param" }]);
  });

  it("is one link of the chain, and the route is documented as declared", () => {
    const { a } = app();
    expect(a.routes.filter((r) => r.path === "/things/:id")).toHaveLength(1);
    const doc = a.getOpenAPIDocument({ openapi: "3.0.0", info: { title: "t", version: "1" } });
    expect(doc.paths["/things/{id}"]?.post?.parameters?.map((p) => ("name" in p ? p.name : ""))).toEqual(["id", "n"]);
    expect(doc.paths["/things/{id}"]?.post?.requestBody).toBeDefined();
  });

  it("leaves jsonBody usable as a plain middleware: the body read under its limit, for c.req.text()", async () => {
    const plain = new Hono();
    plain.onError((err, c) => problemResponse(c, err));
    plain.post("/echo", jsonBody(16), async (c) => c.text(await c.req.text()));
    expect(await (await post(plain, "/echo", '{"a":1}')).text()).toBe('{"a":1}');
    expect(await (await post(plain, "/echo", "")).text()).toBe("{}");
    expect((await post(plain, "/echo", JSON.stringify({ a: "x".repeat(20) }))).status).toBe(413);
  });

  it("refuses, when a route is added, what it would not check", () => {
    const bare = new CheckedOpenAPIHono({ onInvalid: () => undefined });
    const base = { method: "post" as const, path: "/x", responses: { 200: { description: "ok" } } };
    const headers = createRoute({ ...base, request: { headers: z.object({ "x-a": z.string() }) } });
    expect(() => bare.openapi(headers, (c) => c.json({}, 200))).toThrow(/header and cookie parameters/);
    const noLimit = createRoute({ ...base, request: { body: { content: { "application/json": { schema: Body } } } } });
    expect(() => bare.openapi(noLimit, (c) => c.json({}, 200))).toThrow(/needs jsonBody/);
    const form = createRoute({ ...base, middleware: [jsonBody(10)] as const, request: { body: { content: { "text/plain": { schema: z.string() } } } } });
    expect(() => bare.openapi(form, (c) => c.json({}, 200))).toThrow(/only an application\/json body/);
  });

  it("keeps the parsed params of a path and the parsed absent query, frozen; never a failure or a query sent", async () => {
    let parsed = 0;
    const counted = <T extends z.ZodType>(schema: T) => schema.transform((v) => (parsed++, v));
    const get = createRoute({
      method: "get",
      path: "/jobs/{id}",
      request: {
        params: z.object({ id: counted(z.string().min(2)).openapi({ param: { name: "id", in: "path" } }) }),
        query: z.object({ n: counted(z.coerce.number().int().optional()).openapi({ param: { name: "n", in: "query" } }) }),
      },
      responses: { 200: { description: "ok" } },
    });
    const a = new CheckedOpenAPIHono({
      onInvalid: () => {
        throw new EmulatorError("VALIDATION_FAILED", "bad");
      },
    });
    a.onError((err, c) => problemResponse(c, err));
    const frozen: boolean[] = [];
    a.openapi(get, (c) => {
      frozen.push(Object.isFrozen(c.req.valid("param")), Object.isFrozen(c.req.valid("query")));
      return c.json({ id: c.req.valid("param").id, n: c.req.valid("query").n ?? null }, 200);
    });
    const ask = async (path: string) => {
      const res = await a.request(path);
      return [res.status, res.status === 200 ? await res.json() : null];
    };
    expect(await ask("/jobs/ab")).toEqual([200, { id: "ab", n: null }]);
    expect(parsed).toBe(2);
    expect(await ask("/jobs/ab")).toEqual([200, { id: "ab", n: null }]);
    expect(parsed).toBe(2); // both kept
    expect(frozen).toEqual([true, true, true, true]);
    expect(await ask("/jobs/ab?n=3")).toEqual([200, { id: "ab", n: 3 }]);
    expect(await ask("/jobs/ab?n=4")).toEqual([200, { id: "ab", n: 4 }]);
    expect(parsed).toBe(4); // a query sent is parsed each time
    expect(await ask("/jobs/cd")).toEqual([200, { id: "cd", n: null }]);
    expect(parsed).toBe(5);
    for (let k = 0; k < 2; k++) expect(await ask("/jobs/x")).toEqual([400, null]);
  });
});

describe("JSON bodies", () => {
  const chain = (levels: number, open: string, close: string) => open.repeat(levels) + close.repeat(levels);

  it("measures nesting without recursion, objects and arrays alike", () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 4)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(chain(200_000, "[", "]")), 199_999)).toBe(true);
    expect(nestsDeeperThan(JSON.parse(chain(200_000, "[", "]")), 200_000)).toBe(false);
  });

  it(`refuses a body nested more than ${JSON_DEPTH_MAX} levels with 400, and parses one nested exactly so`, () => {
    expect(parseJsonBody(chain(JSON_DEPTH_MAX, "[", "]"))).toHaveLength(1);
    for (const text of [chain(JSON_DEPTH_MAX + 1, "[", "]"), `{"a":${chain(JSON_DEPTH_MAX, "[", "]")}}`]) {
      expect(() => parseJsonBody(text)).toThrow(expect.objectContaining({ code: "BAD_REQUEST", message: expect.stringContaining(`more than ${JSON_DEPTH_MAX} levels deep`) }));
    }
    expect(() => parseJsonBody("{")).toThrow(/not valid JSON/);
  });
});
