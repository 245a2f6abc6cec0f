import { describe, expect, it, vi } from "vitest";

/**
 * A large body is parsed on a thread of its own, and what the thread hands back is read by the
 * event loop in one go (a structured clone): cheap for a few values with long texts, dearer than
 * a parse for many small objects. So a body whose value is still large once the route's large
 * fields are cut out comes back as "valid", and the loop parses it itself, a slice at a time.
 */
const slices = vi.hoisted(() => ({ calls: [] as number[] }));
vi.mock("../../src/domain/json-slices.js", async (original) => {
  const actual = await original<typeof import("../../src/domain/json-slices.js")>();
  return {
    ...actual,
    parseInSlices: (text: string, slicing: Parameters<typeof actual.parseInSlices>[1]) => {
      slices.calls.push(text.length);
      return actual.parseInSlices(text, slicing);
    },
  };
});

const { parseOffLoop } = await import("../../src/http/json-offload.js");

describe("parseOffLoop", () => {
  it("hands a body of 100,000 small objects (1.5 MB) back for the loop to parse in slices, not as a value to receive whole", async () => {
    const text = JSON.stringify({ model: "m", messages: Array.from({ length: 100_000 }, (_, i) => ({ r: [i % 10], s: 1 })) });
    expect(text.length).toBeGreaterThan(1024 * 1024);
    slices.calls.length = 0;
    const body = await parseOffLoop(text, [], "send JSON");
    expect(body).toEqual({ value: JSON.parse(text), texts: {} });
    expect(slices.calls).toEqual([text.length]);
  });

  it("hands the value back when the large part is a field the route keeps as text", async () => {
    const input = { items: Array.from({ length: 100_000 }, (_, i) => ({ r: [i % 10] })) };
    const text = JSON.stringify({ input, webhook: "http://hooks.example/x" });
    slices.calls.length = 0;
    const body = await parseOffLoop(text, ["input"], "send JSON");
    expect(body.value).toEqual({ input: {}, webhook: "http://hooks.example/x" });
    expect(JSON.parse(body.texts.input!)).toEqual(input);
    expect(slices.calls).toEqual([]);
  });

  it("refuses what is not JSON, or nests too deep, either way", async () => {
    const many = JSON.stringify(Array.from({ length: 100_000 }, () => ({ r: [1] })));
    await expect(parseOffLoop(`${many}x`, [], "send JSON")).rejects.toThrow(/not valid JSON; send JSON/);
    await expect(parseOffLoop(`${"[".repeat(2000)}${"]".repeat(2000)}${" ".repeat(1024 * 1024)}`, [], "send JSON")).rejects.toThrow(/nests arrays and objects more than/);
  });
});
