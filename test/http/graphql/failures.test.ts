import { afterEach, describe, expect, it } from "vitest";
import { EmulatorError } from "../../../src/domain/errors.js";
import { SERVICES } from "../../../src/services/index.js";
import type { ServiceDef } from "../../../src/services/shared/service.js";
import { inProcess, type InProcess } from "../../support/in-process.js";

// Resolvers that fail as models and the machine can: a full disk (better-sqlite3's SQLITE_FULL),
// a busy emulator, a fault of minipod's own, a refusal of the field's, and one that answers.
const fullDisk = () => {
  throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
};
const failing: ServiceDef<"failing", Record<string, never>, { v1: readonly []; v2: readonly [] }> = {
  name: "failing",
  collections: { v1: [], v2: [] },
  build: () => ({}),
  graphql: {
    typeDefs: "extend type Mutation { full: String  busy: String  broken: String  missing: String  fine: String }",
    resolvers: () => ({
      Mutation: {
        full: fullDisk,
        busy: () => {
          throw new EmulatorError("BUSY", "too many request bodies held at once", { retryAfter: 1 });
        },
        broken: () => {
          throw new TypeError("cannot read properties of undefined (reading 'x')");
        },
        missing: () => {
          throw new EmulatorError("NOT_FOUND", "no such thing");
        },
        fine: () => "ok",
      },
    }),
  },
};

let e: InProcess;
let lines: string[];
afterEach(() => e?.close());

async function boot() {
  lines = [];
  e = await inProcess({ logLevel: "error", log: (l) => lines.push(l) }, { services: [...SERVICES, failing] });
}
const gql = (query: string) => e.post("/graphql", { query });

describe("a resolver's failure of the request's own is answered as REST answers it", () => {
  it("a full disk: 507 with Retry-After, one log line, no stack", async () => {
    await boot();
    for (let i = 0; i < 3; i++) {
      const res = await gql("mutation { full }");
      expect(res.status).toBe(507);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body).toMatchObject({ title: "Insufficient Storage", status: 507 });
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("the in-memory database is full");
    expect(lines[0]).not.toMatch(/at .*\.[jt]s:\d+/);
  });

  it("an EmulatorError of HTTP's own (503) with its status and Retry-After; minipod's own fault as a 500 with its stack logged", async () => {
    await boot();
    const busy = await gql("mutation { busy }");
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(busy.body.detail).toBe("too many request bodies held at once");
    const broken = await gql("mutation { broken }");
    expect(broken.status).toBe(500);
    expect(broken.text).not.toContain("reading 'x'");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/POST \/graphql: TypeError: cannot read properties of undefined/);
  });

  it("beside a field that has data, is an entry of errors[] with its code (the write that passed is not hidden), logged as above", async () => {
    await boot();
    const res = await gql("mutation { fine full }");
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ fine: "ok", full: null });
    expect(res.body.errors).toEqual([expect.objectContaining({ path: ["full"], extensions: { code: "STORAGE_FULL" } })]);
    expect(res.body.errors[0].message).toMatch(/the disk is full/);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("(first: POST /graphql)");
  });

  it("a refusal of the field's own stays in errors[] of a 200, and logs nothing", async () => {
    await boot();
    const res = await gql("mutation { missing }");
    expect(res.status).toBe(200);
    expect(res.body.errors[0]).toMatchObject({ message: "no such thing", extensions: { code: "NOT_FOUND" } });
    expect(lines).toEqual([]);
  });
});
