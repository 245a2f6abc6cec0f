import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * A body under 1 MiB dense with small objects costs a parse on the event loop as much as a far
 * longer one (100,000 of them in about 1 MB held it 50–110 ms): such a body is parsed off the
 * loop too, while a usual small body costs one comparison.
 */
const offLoop = vi.hoisted(() => ({ lengths: [] as number[] }));
vi.mock("../../src/http/json-offload.js", async (original) => {
  const actual = await original<typeof import("../../src/http/json-offload.js")>();
  return {
    ...actual,
    parseOffLoop: (text: string, ...rest: [readonly string[], string]) => {
      offLoop.lengths.push(text.length);
      return actual.parseOffLoop(text, ...rest);
    },
  };
});

const { parsesOffLoop, DENSE_CHECK_BYTES, OFF_LOOP_BYTES } = await import("../../src/http/json-offload.js");
const { inProcess } = await import("../support/in-process.js");

const dense = (n: number) => JSON.stringify({ input: { items: Array.from({ length: n }, (_, i) => ({ r: [i % 10] })) } });

describe("a body dense with objects", () => {
  it("is parsed off the loop under 1 MiB; a small body or a long sparse one is not", () => {
    const text = dense(100_000);
    expect(text.length).toBeLessThan(OFF_LOOP_BYTES);
    expect(parsesOffLoop(text)).toBe(true);
    expect(parsesOffLoop('{"input":{"prompt":"hi"}}')).toBe(false);
    expect(parsesOffLoop(dense(DENSE_CHECK_BYTES / 20))).toBe(false);
    expect(parsesOffLoop(JSON.stringify({ input: { image: "x".repeat(900_000), n: Array.from({ length: 1000 }, (_, i) => i) } }))).toBe(false);
    expect(parsesOffLoop(" ".repeat(OFF_LOOP_BYTES))).toBe(true);
  });

  let e: Awaited<ReturnType<typeof inProcess>>;
  beforeAll(async () => {
    e = await inProcess({ config: { endpoints: [{ id: "echo", handler: "echo" }] } });
  });
  afterAll(() => e.close());

  it("reaches /run through the thread, and the job is the same", async () => {
    const text = dense(100_000);
    offLoop.lengths.length = 0;
    const r = await e.post("/v2/echo/run", text);
    expect(r.status).toBe(200);
    expect(offLoop.lengths).toEqual([text.length]);
    offLoop.lengths.length = 0;
    expect((await e.post("/v2/echo/run", { input: { x: 1 } })).status).toBe(200);
    expect(offLoop.lengths).toEqual([]);
  });
});
