import { describe, expect, it, vi } from "vitest";

/**
 * The GraphQL schema is built once a server listens, in a turn of its own: the first request to
 * /graphql (a query nested 500 deep to refuse, say) no longer pays its 50 ms and more.
 */
const built = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/services/shared/graphql.js", async (original) => {
  const actual = await original<typeof import("../../src/services/shared/graphql.js")>();
  return {
    ...actual,
    assembleSchema: (...args: Parameters<typeof actual.assembleSchema>) => {
      built.count++;
      return actual.assembleSchema(...args);
    },
  };
});

const { createEmulator, startEmulator } = await import("../../src/compose/emulator.js");

describe("the GraphQL schema", () => {
  it("is built once the minipod command's server listens, before any request asks for it", async () => {
    built.count = 0;
    const emu = await startEmulator({ port: 0, host: "127.0.0.1", clock: "manual" }, "real", { warm: true });
    try {
      await new Promise((r) => setImmediate(r));
      expect(built.count).toBe(1);
      const deep = JSON.stringify({ query: `{ ${"myself { ".repeat(500)}id${" }".repeat(500)} }` });
      const res = await fetch(`${emu.url}/graphql`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: deep });
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(/nests 21 levels deep/);
      expect(built.count).toBe(1);
    } finally {
      await emu.close();
    }
  });

  it("is built by a test suite's emulator only when first asked for", async () => {
    built.count = 0;
    const emu = await createEmulator({ port: 0, host: "127.0.0.1", clock: "manual" });
    try {
      await new Promise((r) => setImmediate(r));
      expect(built.count).toBe(0);
      const res = await fetch(`${emu.url}/graphql`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify({ query: "{ myself { id } }" }) });
      expect(res.status).toBe(200);
      expect(built.count).toBe(1);
    } finally {
      await emu.close();
    }
  });
});
