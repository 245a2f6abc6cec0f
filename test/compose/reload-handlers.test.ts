import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/** `emulator.reloadHandlers()`, what `minipod --watch` calls on an edit of a handler module. */
describe("reloadHandlers", () => {
  let emu: Emulator | undefined;
  afterEach(() => emu?.close());

  it("runs new jobs on the edited module and its imports, keeps running ones on theirs, and keeps a module that no longer loads", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-reload-"));
    writeFileSync(join(dir, "word.mjs"), 'export const word = "one";\n');
    writeFileSync(join(dir, "h.mjs"), 'import { word } from "./word.mjs";\nexport default async (input, ctx) => { await ctx.sleep(1000); return word; };\n');
    writeFileSync(join(dir, "emulator.config.json"), JSON.stringify({ endpoints: [{ id: "h", handler: "./h.mjs", workersMin: 1, workersMax: 3, coldStartMs: 0 }] }));
    emu = await createEmulator({ clock: "manual", config: join(dir, "emulator.config.json") });
    const run = async () => ((await (await fetch(`${emu!.url}/v2/h/run`, { method: "POST", headers: { authorization: "k" }, body: '{"input":{}}' })).json()) as { id: string }).id;
    const first = await run();

    writeFileSync(join(dir, "word.mjs"), 'export const word = "two";\n');
    expect(await emu.reloadHandlers()).toEqual({ reloaded: ["./h.mjs"], failed: [] });
    const second = await run();

    writeFileSync(join(dir, "h.mjs"), "export default (input => {\n");
    const broken = await emu.reloadHandlers();
    expect(broken.reloaded).toEqual([]);
    expect(broken.failed).toEqual([{ handler: "./h.mjs", error: expect.stringContaining("cannot load ./h.mjs") }]);
    const third = await run();

    expect((await emu.waitForJob("h", first, "COMPLETED")).output).toBe("one");
    expect((await emu.waitForJob("h", second, "COMPLETED")).output).toBe("two");
    expect((await emu.waitForJob("h", third, "COMPLETED")).output).toBe("two");
  });
});
