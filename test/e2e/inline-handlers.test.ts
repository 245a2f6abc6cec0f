// Handlers written inline in createEmulator's config, as a test author writes them first: a
// function, an async generator function, on endpoints, templates and as defaultHandler. The types
// are checked by `npm test`'s tsc: the @ts-expect-error lines fail it if they stop being errors.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import runpodSdk from "runpod-sdk";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { createEmulator, type Emulator, type EmulatorConfig, type Handler, type HandlerContext } from "../../src/index.js";
import { startCli } from "../support/cli.js";

/** A handler typed for its input, given where any handler goes. */
const greet: Handler<{ name: string }> = (input) => ({ greeting: `hello ${input.name}` });

const config: EmulatorConfig = {
  endpoints: [
    {
      id: "upper",
      handler: async (input, ctx) => {
        expectTypeOf(ctx).toEqualTypeOf<HandlerContext>();
        await ctx.sleep(1000);
        return { text: input.text.toUpperCase(), attempt: ctx.attempt };
      },
    },
    {
      id: "words",
      handler: async function* (input, ctx) {
        for (const word of String(input.text).split(" ")) {
          await ctx.sleep(100);
          yield { word };
        }
      },
    },
    { id: "greet", handler: greet },
    { id: "typed", handler: async (input: { n: number }) => input.n + 1 },
    { id: "from-template", templateId: "t" },
    { id: "plain" },
  ],
  templates: [{ id: "t", name: "T", handler: (input) => ({ fromTemplate: input }) }],
  defaultHandler: () => "the default",
};

// @ts-expect-error a handler is a function, a name or an HTTP worker
const _notAHandler: EmulatorConfig = { endpoints: [{ id: "x", handler: 5 }] };

describe("handlers given inline in the config", () => {
  let emu: Emulator;
  const key = "any-key";
  const run = async (endpoint: string, input: object) => {
    const ep = runpodSdk(key, { baseUrl: `${emu.url}/v2` }).endpoint(endpoint)!;
    const { id } = await ep.run({ input });
    return { ep, id };
  };
  beforeAll(async () => {
    emu = await createEmulator({ clock: "manual", config });
  });
  afterAll(() => emu.close());

  it("run as functions and async generators, on endpoints, templates and as the default", async () => {
    const upper = await run("upper", { text: "hi" });
    expect(await emu.waitForJob("upper", upper.id, "COMPLETED")).toMatchObject({ output: { text: "HI", attempt: 1 }, executionTime: 1000 });

    const words = await run("words", { text: "one two" });
    expect(await emu.waitForJob("words", words.id, "COMPLETED")).toMatchObject({ output: [{ word: "one" }, { word: "two" }] });
    const streamed = await fetch(`${emu.url}/v2/words/stream/${words.id}`, { headers: { authorization: key } }).then((r) => r.json());
    expect(streamed).toMatchObject({ status: "COMPLETED", stream: [{ output: { word: "one" } }, { output: { word: "two" } }] });

    for (const [endpoint, input, output] of [
      ["greet", { name: "ada" }, { greeting: "hello ada" }],
      ["typed", { n: 1 }, 2],
      ["from-template", { x: 1 }, { fromTemplate: { x: 1 } }],
      ["plain", {}, "the default"],
    ] as const) {
      const job = await run(endpoint, input);
      expect(await emu.waitForJob(endpoint, job.id, "COMPLETED"), endpoint).toMatchObject({ output });
    }
  });

  it("are named after where they were given, in the endpoint list and the dashboard", async () => {
    const handlers = Object.fromEntries(emu.endpoints().map((e) => [e.id, e.handler]));
    expect(handlers).toEqual({ upper: "inline:upper", words: "inline:words", greet: "inline:greet", typed: "inline:typed", "from-template": "inline:template:t", plain: "inline:default" });
    const listed = (await fetch(`${emu.url}/_emulator/endpoints`).then((r) => r.json())) as { endpoints: Array<{ id: string; handler: string }> };
    expect(listed.endpoints.find((e) => e.id === "upper")?.handler).toBe("inline:upper");
    const page = await fetch(`${emu.url}/`).then((r) => r.text());
    expect(page).toContain("inline:words");
  });

  it("survive a reset, and a snapshot restored", async () => {
    emu.snapshot("before");
    await emu.reset();
    const after = await run("upper", { text: "reset" });
    expect(await emu.waitForJob("upper", after.id, "COMPLETED")).toMatchObject({ output: { text: "RESET" } });
    await emu.restore("before");
    const restored = await run("words", { text: "back" });
    expect(await emu.waitForJob("words", restored.id, "COMPLETED")).toMatchObject({ output: [{ word: "back" }] });
  });

  it("cannot travel in an export: the imported endpoint's jobs fail, saying so, and the start goes on", async () => {
    const exported = Buffer.from(await (await fetch(`${emu.url}/_emulator/export`)).arrayBuffer());
    const dir = mkdtempSync(join(tmpdir(), "minipod-inline-"));
    writeFileSync(join(dir, "state.db"), exported);
    writeFileSync(join(dir, "empty.json"), "{}");
    const cli = await startCli(["--import", join(dir, "state.db"), "--config", join(dir, "empty.json"), "--clock", "manual"]);
    try {
      expect(cli.stdout()).toMatch(/upper +http:\/\/\S+\/v2\/upper +handler inline:upper/);
      expect(cli.stderr()).toContain('handler "inline:upper" of endpoint "upper" was a function given in code');
      const ep = runpodSdk(key, { baseUrl: `${cli.url}/v2` }).endpoint("upper")!;
      const { id } = await ep.run({ input: { text: "x" } });
      await fetch(`${cli.url}/_emulator/run-until-idle`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(await ep.status(id)).toMatchObject({ status: "FAILED", error: expect.stringContaining('createEmulator({ handlers: { "inline:upper": fn } })') });
    } finally {
      expect(await cli.stop()).toBe(0);
    }
  });

  it("may not take a name already given to createEmulator's handlers", async () => {
    await expect(createEmulator({ config: { endpoints: [{ id: "a", handler: () => 1 }] }, handlers: { "inline:a": () => 2 } })).rejects.toThrow(
      /handlers\["inline:a"\]: the name is taken/,
    );
  });
});
