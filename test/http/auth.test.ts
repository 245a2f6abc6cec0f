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
