import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";

/** A project as `npm init -y` makes it: package.json without "type", so .js files are CommonJS. */
function commonJsProject(handler: string): string {
  const dir = mkdtempSync(join(tmpdir(), "minipod-cjs-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "my-worker", version: "1.0.0", main: "index.js", scripts: { test: "echo" }, license: "ISC" }, null, 2));
  writeFileSync(join(dir, "handler.js"), handler);
  writeFileSync(join(dir, "emulator.config.json"), JSON.stringify({ endpoints: [{ id: "w", handler: "./handler.js", workersMin: 1 }] }));
  return dir;
}

let emu: Emulator | undefined;
let dir: string | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const runsync = async (e: Emulator, input: unknown) =>
  (await (await fetch(`${e.url}/v2/w/runsync`, { method: "POST", headers: { authorization: "Bearer k" }, body: JSON.stringify({ input }) })).json()) as { status: string; output: unknown };

describe("a .js handler in a CommonJS project (npm init)", () => {
  for (const [form, source] of [
    ["module.exports = function", "module.exports = async (input) => ({ upper: String(input.text).toUpperCase(), form: 'module.exports' });\n"],
    ["exports.handler", "exports.handler = async (input) => ({ upper: String(input.text).toUpperCase(), form: 'exports.handler' });\n"],
    ["export default (ES module syntax)", "export default async function handler(input) {\n  return { upper: String(input.text).toUpperCase(), form: 'export default' };\n}\n"],
    ["export const handler (ES module syntax)", "export const handler = async (input) => ({ upper: String(input.text).toUpperCase(), form: 'export const' });\n"],
  ] as const) {
    it(`loads ${form}`, async () => {
      dir = commonJsProject(source);
      emu = await createEmulator({ port: 0, config: join(dir, "emulator.config.json") });
      const res = await runsync(emu, { text: "hi" });
      expect(res).toMatchObject({ status: "COMPLETED", output: { upper: "HI" } });
    });
  }
});
