import { afterEach, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { ApiKeyConfigSchema } from "../../src/config/auth-schema.js";
import { ConfigError } from "../../src/config/load.js";
import { buildEmulator } from "../../src/compose/emulator.js";
import { inProcess, type InProcess } from "../support/in-process.js";

const endpoints = [{ id: "echo", handler: "echo", workersMin: 1, workersMax: 1 }];

const keys: Array<z.input<typeof ApiKeyConfigSchema>> = [
  { key: "full-key" },
  { key: "reader", scopes: ["queue:read", "rest:read"] },
  { key: "submitter", scopes: ["queue:write"] },
  { key: "worker-key", scopes: ["worker"] },
  { key: "nothing", scopes: [] },
];

describe("authentication", () => {
  let e: InProcess;
  afterEach(() => e.close());

  /** A request with exactly these headers (the helper would add its own key). */
  const raw = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const res = await e.app.request(`http://minipod.test${path}`, init);
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  it("answers 401 problem+json for a missing, malformed or unknown key on every service route", async () => {
    e = await inProcess({ config: { endpoints, auth: { keys } } });
    const cases: Array<[string, string, Record<string, string>, RegExp]> = [
      ["POST", "/v2/echo/run", {}, /missing API key/],
      ["GET", "/v2/network-volumes", {}, /^missing bearer token$/],
      ["GET", "/v1/endpoints", {}, /^missing bearer token$/],
      ["GET", "/v2/echo/health", { authorization: "Basic dXNlcjpwYXNz" }, /malformed Authorization header/],
      ["GET", "/v2/echo/health", { authorization: "Bearer" }, /malformed/],
      ["GET", "/v2/echo/health", { authorization: "Bearer   " }, /malformed/],
      ["GET", "/v2/echo/health", { authorization: "Bearer two words" }, /malformed/],
      ["GET", "/v2/echo/health", { authorization: "Bearer wrong-key" }, /^invalid API key$/],
      ["GET", "/v2/echo/health", { authorization: "wrong-key" }, /^invalid API key$/],
      ["GET", "/v2/pods", { authorization: "full-key" }, /malformed Authorization header: expected "Bearer <API key>"$/],
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
    e = await inProcess({ config: { endpoints, auth: { keys } } });
    const bearer = await raw("POST", "/v2/echo/run", { authorization: "Bearer full-key" }, { input: { a: 1 } });
    expect(bearer.status).toBe(200);
    const lower = await raw("GET", `/v2/echo/status/${String(bearer.body.id)}`, { authorization: "bearer full-key" });
    expect(lower.status).toBe(200);
    const bare = await raw("GET", `/v2/echo/status/${String(bearer.body.id)}`, { authorization: "full-key" });
    expect(bare.status).toBe(200);
    const runsync = await raw("POST", "/v2/echo/runsync", { authorization: "full-key" }, { input: { b: 2 } });
    expect(runsync.body).toMatchObject({ status: "COMPLETED", output: { b: 2 } });
    const unknown = await raw("GET", "/v2/echo/health", { authorization: "Bearer secret-guess-123" });
    expect(JSON.stringify(unknown.body)).not.toContain("secret-guess-123");
  });

  it("answers 403 when the key's scopes do not cover the route", async () => {
    e = await inProcess({ config: { endpoints, auth: { keys } } });
    const job = await raw("POST", "/v2/echo/run", { authorization: "Bearer submitter" }, { input: {} });
    expect(job.status).toBe(200);
    const expectations: Array<[string, string, string, number, string?]> = [
      ["reader", "GET", `/v2/echo/status/${String(job.body.id)}`, 200],
      ["reader", "GET", "/v2/echo/health", 200],
      ["reader", "POST", "/v2/echo/run", 403, "queue:write"],
      ["reader", "POST", "/v2/echo/purge-queue", 403, "queue:write"],
      ["reader", "GET", "/v2/network-volumes", 404],
      ["reader", "POST", "/v2/network-volumes", 403, "rest:write"],
      ["submitter", "POST", `/v2/echo/cancel/${String(job.body.id)}`, 200],
      ["submitter", "GET", "/v2/echo/health", 403, "queue:read"],
      ["submitter", "GET", "/v1/endpoints", 403, "rest:read"],
      ["worker-key", "GET", "/v2/echo/job-take/w1", 404],
      ["worker-key", "GET", "/v2/echo/health", 403, "queue:read"],
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

  it("accepts any non-empty key when none is configured, and says so", async () => {
    e = await inProcess({ config: { endpoints } });
    expect(e.core.auth.open).toBe(true);
    expect((await e.get("/v2/echo/health", { authorization: "Bearer anything-at-all" })).status).toBe(200);
    expect((await e.get("/v2/echo/health", { authorization: "whatever" })).status).toBe(200);
    expect((await raw("GET", "/v2/echo/health")).status).toBe(401);
    expect((await raw("GET", "/v2/echo/health", { authorization: "Bearer " })).status).toBe(401);
    e.close();
    e = await inProcess({ config: { endpoints, auth: { keys } } });
    expect(e.core.auth.open).toBe(false);
  });

  it("leaves the emulator's own routes open", async () => {
    e = await inProcess({ config: { endpoints, auth: { keys } } });
    for (const path of ["/_emulator/clock", "/openapi.json"]) expect((await raw("GET", path)).status, path).toBe(200);
    expect((await raw("POST", "/_emulator/clock/advance", {}, { ms: 5 })).status).toBe(200);
    // Not a service route: a 404 for an unknown path outside /v1 and /v2 needs no key.
    expect((await raw("GET", "/nowhere")).status).toBe(404);
  });
});

describe("auth configuration", () => {
  const invalid = async (config: unknown) => {
    try {
      const built = await buildEmulator({ config: config as never });
      built.core.close();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error("expected the config to be refused");
  };

  it("refuses unknown scopes, duplicate keys and keys with spaces without printing the key", async () => {
    expect(await invalid({ auth: { keys: [{ key: "k", scopes: ["queue:admin"] }] } })).toMatch(/auth\.keys\[0\]\.scopes\[0\]/);
    const dup = await invalid({ auth: { keys: [{ key: "s3cr3t-value" }, { key: "s3cr3t-value" }] } });
    expect(dup).toMatch(/auth\.keys\[1\]\.key: duplicate API key/);
    expect(dup).not.toContain("s3cr3t-value");
    const spaced = await invalid({ auth: { keys: [{ key: "two words" }] } });
    expect(spaced).toMatch(/auth\.keys\[0\]\.key: expected a key without spaces/);
    expect(spaced).not.toContain("two words");
    expect(await invalid({ auth: { keys: [{ key: "" }] } })).toMatch(/auth\.keys\[0\]\.key/);
  });

  it("reserves the REST resource names so they cannot be endpoint ids", async () => {
    for (const id of ["network-volumes", "pods", "serverless", "templates", "registries", "billing", "catalog", "account", "clusters"]) {
      expect(await invalid({ endpoints: [{ id, handler: "echo" }] })).toContain(`endpoints[0].id: endpoint id "${id}" is reserved: /v2/${id} is a resource of the REST surface`);
    }
  });
});
