import fc from "fast-check";
import { getNamedType, getNullableType, isEnumType, isInputObjectType, isListType, isScalarType, type GraphQLInputType } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcess, type InProcess } from "../../support/in-process.js";

/**
 * Every mutation and every query with arguments, called with inputs of the right types and any
 * values (drawn from the schema itself), and ids of resources that exist: whatever a resolver
 * refuses is an error of its own in a 200, never an internal error, and never a 500.
 */
const CONFIG = {
  rateLimits: { enabled: false },
  templates: [{ id: "tpl", name: "worker", imageName: "me/worker:1", isServerless: true }],
  networkVolumes: [{ id: "vol", name: "data", size: 20, dataCenter: "US-KS-2" }],
};

/** Values a client might send for a string: ids that exist, enum-like names, empty, anything. */
const strings = (ids: () => string[]) =>
  fc.oneof(
    fc.constantFrom(
      "",
      "tpl",
      "vol",
      "ALL",
      "SECURE",
      "FLASHBOOT",
      "OFF",
      "QUEUE_DELAY",
      "REQUEST_COUNT",
      "AMPERE_16",
      "ADA_24,-NVIDIA GeForce RTX 4090",
      "NVIDIA A40",
      "12.4,12.8",
      "US-KS-2",
      "8888/http,22/tcp",
      "cpu3c-2-4",
      "ssh-ed25519 AAAA k",
    ),
    fc.constant(null).map(() => ids()[0] ?? "none"),
    fc.string({ maxLength: 12 }),
  );

function arbitraryOf(type: GraphQLInputType, ids: () => string[], depth = 0): fc.Arbitrary<unknown> {
  const inner = getNullableType(type) as GraphQLInputType;
  const value = ((): fc.Arbitrary<unknown> => {
    if (isListType(inner)) return fc.array(arbitraryOf(inner.ofType as GraphQLInputType, ids, depth + 1), { maxLength: 3 });
    if (isInputObjectType(inner)) {
      const fields = Object.values(inner.getFields());
      return fc.record(Object.fromEntries(fields.map((f) => [f.name, arbitraryOf(f.type, ids, depth + 1)])), {
        requiredKeys: fields.filter((f) => f.type !== getNullableType(f.type)).map((f) => f.name),
      });
    }
    if (isEnumType(inner)) return fc.constantFrom(...inner.getValues().map((v) => v.name));
    const name = isScalarType(inner) ? inner.name : (getNamedType(inner) as unknown as { name: string }).name;
    if (name === "Int") return fc.oneof(fc.integer({ min: -2, max: 10 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
    if (name === "Float") return fc.oneof(fc.integer({ min: -1, max: 10 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
    if (name === "Boolean") return fc.boolean();
    if (name === "CloudType") return fc.constantFrom("ALL", "SECURE", "COMMUNITY", "");
    if (name === "FlashBootType") return fc.constantFrom("OFF", "FLASHBOOT", "PRIORITY_FLASHBOOT", "");
    return strings(ids);
  })();
  return type === inner ? fc.option(value, { nil: null }) : value;
}

describe("GraphQL resolvers under any well-typed input", () => {
  let e: InProcess;
  const made: string[] = [];
  beforeAll(async () => {
    e = await inProcess({ config: CONFIG, logLevel: "error" });
  });
  afterAll(() => e.close());

  it("answer each call with data or their own errors, never an internal error", async () => {
    const schema = e.core.graphqlSchema();
    const roots = [
      ["mutation", schema.getMutationType()!],
      ["query", schema.getQueryType()!],
    ] as const;
    const calls = roots.flatMap(([op, type]) =>
      Object.values(type.getFields())
        .filter((f) => f.args.length > 0)
        .map((f) => ({ op, field: f })),
    );
    const ids = () => made;
    const cases = fc.oneof(
      ...calls.map(({ op, field }) =>
        fc.record(Object.fromEntries(field.args.map((a) => [a.name, arbitraryOf(a.type, ids)]))).map((variables) => ({ op, field, variables })),
      ),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ op, field, variables }) => {
        const decls = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(", ");
        const uses = field.args.map((a) => `${a.name}: $${a.name}`).join(", ");
        const named = getNamedType(field.type);
        const fields = "getFields" in named ? (named.getFields() as Record<string, unknown>) : undefined;
        const selection = fields ? (fields.id ? "{ __typename id }" : "{ __typename }") : "";
        const query = `${op} (${decls}) { result: ${field.name}(${uses}) ${selection} }`;
        const res = await e.request("POST", "/graphql", { query, variables });
        const where = `${field.name} ${JSON.stringify(variables).slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
        expect(res.status, where).toBeLessThan(500);
        for (const err of res.body?.errors ?? []) expect(err.extensions?.code, where).not.toBe("INTERNAL_SERVER_ERROR");
        // What was made is what later calls name (podStop of a pod that exists...).
        const made1 = res.body?.data?.result as { id?: string } | Array<{ id?: string }> | null | undefined;
        for (const r of Array.isArray(made1) ? made1.slice(0, 2) : [made1]) if (r?.id) made.unshift(r.id);
        made.splice(8);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200), interruptAfterTimeLimit: 5_000 },
    );
  });
});
