import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openAiSettingsOf } from "../../src/config/openai-schema.js";
import { configFor } from "../../src/compose/config.js";
import { SCHEMA_VALUE_MAX_CHARS, boundedSchemaValue, schemaBudget, schemaValue } from "../../src/domain/openai/schema-value.js";
import { OPENAI_DEFAULTS } from "../../src/domain/openai/settings.js";
import { contentText, generatedText, limitReply, tokensOf } from "../../src/domain/openai/text.js";

describe("deterministic text", () => {
  it("splits any text into tokens that join back exactly", () => {
    fc.assert(fc.property(fc.string(), (text) => tokensOf(text).join("") === text));
    expect(tokensOf(" Hello  world. ")).toEqual([" Hello", "  world. "]);
  });

  it("generates the same words for the same seed, capitalised, as many as asked", () => {
    expect(generatedText("seed", 5)).toBe(generatedText("seed", 5));
    expect(generatedText("seed", 5)).not.toBe(generatedText("other", 5));
    expect(generatedText("seed", 5)).toMatch(/^[A-Z][a-z]*( [a-z]+){4}\.$/);
    expect(generatedText("seed", 0)).toBe("");
  });

  it("cuts a reply at the first stop sequence, then at max tokens", () => {
    expect(limitReply("a b c d", ["c"], undefined)).toEqual({ tokens: ["a", " b "], finish: "stop" });
    expect(limitReply("a b c d", [], 2)).toEqual({ tokens: ["a", " b"], finish: "length" });
    expect(limitReply("a b", [""], 2)).toEqual({ tokens: ["a", " b"], finish: "stop" });
  });

  it("reads message content as a string or as text parts", () => {
    expect(contentText("hi")).toBe("hi");
    expect(contentText([{ type: "text", text: "a" }, { type: "image_url", image_url: {} }, { type: "text", text: "b" }])).toBe("a\nb");
    expect(contentText(undefined)).toBe("");
  });
});

describe("values made from a JSON Schema", () => {
  it("fills what an object requires, from const, enum, default, examples, formats and bounds", () => {
    const schema = {
      type: "object",
      properties: {
        kind: { const: "k" },
        unit: { enum: ["C", "F"] },
        n: { type: "integer", minimum: 3.5 },
        x: { type: "number" },
        when: { type: "string", format: "date-time" },
        code: { type: "string", minLength: 20 },
        tags: { type: "array", items: { type: "string" }, minItems: 2 },
        maybe: { anyOf: [{ type: "null" }, { type: "boolean" }] },
        ref: { $ref: "#/$defs/point" },
        optional: { type: "string" },
        withDefault: { type: "string", default: "d" },
      },
      required: ["kind", "unit", "n", "x", "when", "code", "tags", "maybe", "ref", "withDefault"],
      $defs: { point: { type: "object", properties: { lat: { type: "number", examples: [59.9] } } } },
    };
    expect(schemaValue(schema)).toEqual({
      kind: "k",
      unit: "C",
      n: 4,
      x: 1,
      when: "2025-01-01T00:00:00Z",
      code: "example codexxxxxxxx",
      tags: ["example tags", "example tags"],
      maybe: true,
      ref: { lat: 59.9 },
      withDefault: "d",
    });
  });

  it("stops at recursion and answers null for what it cannot read", () => {
    const loop = { type: "object", properties: { self: { $ref: "#" } }, required: ["self"] };
    expect(JSON.stringify(schemaValue(loop))).toContain("null");
    expect(schemaValue("nope")).toBeNull();
  });

  it("counts every character of the value's JSON text, keys and escapes included", () => {
    const schemas: unknown[] = [
      { type: "object", properties: { "quote\"d": { type: "string" }, "new\nline": { type: "integer", minimum: -12.5 }, e: { enum: [{ a: [1, "b"] }] } } },
      { type: "array", minItems: 3, items: { type: "object", properties: { x: { type: "number", minimum: 1e21 }, y: { type: "boolean" }, z: {} } } },
      { type: "string", format: "email" },
      { type: "object", properties: { "\u0001": { type: "string" } }, required: ["\u0001", "missing"] },
    ];
    for (const schema of schemas) {
      const budget = schemaBudget();
      const value = schemaValue(schema, budget);
      expect(budget.chars).toBe(JSON.stringify(value).length);
    }
    // allOf merges objects: counted as the parts, a little more than the merged text.
    const budget = schemaBudget();
    const merged = schemaValue({ allOf: [{ type: "object", properties: { a: { type: "string", maxLength: 3 } } }, { type: "object", properties: { b: { type: "string", minLength: 40 } } }] }, budget);
    expect(merged).toEqual({ a: "exa", b: "example b".padEnd(40, "x") });
    expect(budget.chars).toBeGreaterThanOrEqual(JSON.stringify(merged).length);
  });

  it("refuses a value of long property names before building it, having done little work", () => {
    const name = "n".repeat(200_000);
    const nested = (levels: number): Record<string, unknown> =>
      levels === 0 ? { type: "object", properties: { [name]: { type: "string" } } } : { type: "array", minItems: 10, items: nested(levels - 1) };
    // 1,000 objects, each holding the name twice (its key, and "example <name>"): 400 million characters unbounded.
    const budget = schemaBudget();
    const made = boundedSchemaValue(nested(3), budget);
    expect(made).toEqual({ error: expect.stringMatching(/more than 100,000 characters/) });
    // The first key alone passes the bound: refused at the first object, before its value.
    expect(budget.nodes).toBe(4);
    expect(budget.chars).toBeLessThan(SCHEMA_VALUE_MAX_CHARS + name.length + 10);
    // A name a string's maxLength cuts is counted as cut.
    const cut = schemaBudget();
    const short = schemaValue({ type: "array", minItems: 10, items: { type: "object", properties: { [name.slice(0, 5000)]: { type: "string", maxLength: 12 } } } }, cut);
    expect(budget.chars).toBeGreaterThan(cut.chars);
    expect(cut.chars).toBe(JSON.stringify(short).length);
  });

  it("shares one budget between the values of one answer", () => {
    const budget = schemaBudget();
    const schema = { type: "string", minLength: 60_000 };
    expect(boundedSchemaValue(schema, budget)).toHaveProperty("value");
    expect(boundedSchemaValue(schema, budget)).toEqual({ error: expect.stringMatching(/characters/) });
  });

  it("reads each schema object once, however often the value repeats it", () => {
    // A schema used 1,000 times whose lists are long: read once, not once per use.
    const leaf = { anyOf: [...Array.from({ length: 100_000 }, () => ({ type: "null" })), { type: "boolean" }], required: Array(100_000).fill(0) };
    const budget = schemaBudget();
    const value = schemaValue({ type: "array", minItems: 10, items: { type: "array", minItems: 10, items: { type: "array", minItems: 10, items: leaf } } }, budget);
    expect((value as unknown[][][]).flat(2)).toHaveLength(1000);
    expect(budget.chars).toBe(JSON.stringify(value).length);
  });
});

describe("an endpoint's openai settings", () => {
  it("are the defaults under what the config gives, and are checked at start", () => {
    const config = configFor().schema.parse({ endpoints: [{ id: "a", handler: "openai", openai: { models: ["m"], tokenDelayMs: 0 } }, { id: "b" }] });
    const of = openAiSettingsOf(config.endpoints);
    expect(of("a")).toEqual({ ...OPENAI_DEFAULTS, models: ["m"], tokenDelayMs: 0 });
    expect(of("b")).toBe(OPENAI_DEFAULTS);
    expect(of("made-through-the-api")).toBe(OPENAI_DEFAULTS);
    const bad = configFor().schema.safeParse({ endpoints: [{ id: "a", openai: { models: [], tokenDelayMs: -1, bogus: 1 } }] });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => i.path.join("."))).toEqual(expect.arrayContaining(["endpoints.0.openai.models", "endpoints.0.openai.tokenDelayMs", "endpoints.0.openai"]));
  });
});
