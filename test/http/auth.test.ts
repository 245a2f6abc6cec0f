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

// The answers to requests (401, 403, keys accepted) are checked on both transports by the queue
// suite, test/http/queue/queue.cases.ts.
describe("authentication", () => {
  let e: InProcess;
  afterEach(() => e.close());

  it("says whether auth is open: no key configured", async () => {
    e = await inProcess({ config: { endpoints } });
    expect(e.core.auth.open).toBe(true);
    e.close();
    e = await inProcess({ config: { endpoints, auth: { keys } } });
    expect(e.core.auth.open).toBe(false);
  });
});

describe("a 401 says where the keys minipod accepts are configured", () => {
  let e: InProcess;
  afterEach(() => e.close());
  const detail = async (path: string, authorization: string) => {
    const res = await e.get<{ detail: string }>(path, { authorization });
    expect(res.status).toBe(401);
    return res.body.detail;
  };

  it("open auth: any non-empty key, while auth.keys is empty", async () => {
    e = await inProcess({ config: { endpoints } });
    for (const path of ["/v2/echo/health", "/v2/pods"]) {
      expect(await detail(path, "")).toMatch(/any non-empty key is accepted: auth\.keys of minipod's config is empty/);
    }
  });

  it("keys configured: those of auth.keys in minipod's config", async () => {
    e = await inProcess({ config: { endpoints, auth: { keys } } });
    expect(await detail("/v2/echo/health", "Bearer wrong-key")).toBe("invalid API key: minipod accepts the keys listed in auth.keys of its config");
    expect(await detail("/v2/echo/health", "")).toMatch(/^missing API key: send Authorization: Bearer <key>; minipod accepts the keys listed in auth\.keys of its config$/);
  });

  it("the control key: controlKey of minipod's config", async () => {
    e = await inProcess({ config: { endpoints, controlKey: "ck" } });
    expect(await detail("/_emulator/clock", "Bearer nope")).toBe("the control key is wrong: it is controlKey of minipod's config");
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
