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

const { createEmulator } = await import("../../src/compose/emulator.js");

describe("the GraphQL schema", () => {
  it("is built once the server listens, before any request asks for it", async () => {
    const emu = await createEmulator({ port: 0, host: "127.0.0.1", clock: "manual" });
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
});
