import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openAiSettingsOf } from "../../src/config/openai-schema.js";
import { configFor } from "../../src/compose/config.js";
import { schemaValue } from "../../src/domain/openai/schema-value.js";
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
