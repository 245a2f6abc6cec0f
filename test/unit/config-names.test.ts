import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inlineConfig, loadConfigFile } from "../../src/compose/config.js";
import { withLineAndColumn } from "../../src/config/load.js";

const file = (text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), "minipod-cfg-")), "emulator.config.json");
  writeFileSync(path, text);
  return path;
};
const message = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("no error");
};

describe("config mistakes say where and what was meant", () => {
  it("a key close to a real one: did you mean, at any depth", () => {
    expect(message(() => inlineConfig({ endpoints: [{ id: "a", handler: "echo", workersMax: 2, wokersMin: 1 }] } as never))).toMatch(
      /endpoints\[0\]: unknown key "wokersMin": did you mean "workersMin"\?/,
    );
    expect(message(() => inlineConfig({ jounral: { maxEntries: 5 } } as never))).toMatch(/\(root\): unknown key "jounral": did you mean "journal"\?/);
    expect(message(() => inlineConfig({ journal: { maxEntrys: 5 } } as never))).toMatch(/journal: unknown key "maxEntrys": did you mean "maxEntries"\? Valid: maxEntries, maxBodyBytes/);
  });

  it("a handler name close to a built-in one: did you mean", async () => {
    const { createEmulator } = await import("../../src/index.js");
    await expect(createEmulator({ port: 0, config: { endpoints: [{ id: "a", handler: "ecoh" }] } })).rejects.toThrow(
      /endpoints\[0\]\.handler: unknown handler "ecoh": did you mean "echo"\? use one of echo, scripted/,
    );
  });

  it("a JSON syntax error gives its line and column", () => {
    const path = file('{\n  "endpoints": [\n    { "id": "a", }\n  ]\n}\n');
    expect(message(() => loadConfigFile(path))).toMatch(/is not valid JSON: .*\(line 3, column 18\)/);
    expect(withLineAndColumn("Unexpected token in JSON at position 3", "ab\ncd")).toBe("Unexpected token in JSON at position 3 (line 2, column 1)");
  });
});
