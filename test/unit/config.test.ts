import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCli } from "../../src/config/cli-args.js";
import { configJsonSchema, loadConfigFile, parseConfig } from "../../src/compose/config.js";
import { ConfigError } from "../../src/config/load.js";
import { getHeapStatistics } from "node:v8";
import { heldBytesDefault } from "../../src/compose/runtime.js";

const root = new URL("../../", import.meta.url).pathname;

describe("config", () => {
  it("fills documented defaults", () => {
    const c = parseConfig({ endpoints: [{ id: "a" }] });
    // No mode: the minipod command takes real, createEmulator auto (see startEmulator).
    expect(c.clock).toEqual({ speed: 1 });
    expect(c.endpoints[0]).toMatchObject({ id: "a", handler: "echo", workersMin: 0, workersMax: 3, idleTimeout: 5, coldStartMs: 1000 });
  });

  it("holds new jobs' rows in memory up to a million, and their bytes up to an eighth of node's heap limit unless memory.heldJobBytes says", () => {
    const c = parseConfig({ endpoints: [{ id: "a" }] });
    expect(c.memory).toMatchObject({ heldJobRows: 1_000_000, heldJobIdleMs: 1_000 });
    expect(c.memory.heldJobBytes).toBeUndefined();
    expect(heldBytesDefault()).toBe(Math.floor(getHeapStatistics().heap_size_limit / 8));
    expect(parseConfig({ endpoints: [{ id: "a" }], memory: { heldJobBytes: 1024 } }).memory.heldJobBytes).toBe(1024);
  });

  it("names every bad field and why", () => {
    let message = "";
    try {
      parseConfig({ endpoints: [{ id: "bad id!", workersMax: -1, colds: 1 }, { id: "x", workersMin: 3, workersMax: 1 }], clock: { mode: "fast" } }, "my.json");
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toContain("my.json is invalid");
    expect(message).toContain("endpoints[0].id: expected letters, digits, '_' or '-'");
    expect(message).toContain("endpoints[0].workersMax");
    expect(message).toMatch(/endpoints\[0\]: unknown key "colds" Valid: id, name, type, requestCount, handler/);
    expect(message).toContain("endpoints[1].workersMin: workersMin must not exceed workersMax");
    expect(message).toContain("clock.mode");
  });

  it("refuses duplicate endpoint ids", () => {
    expect(() => parseConfig({ endpoints: [{ id: "a" }, { id: "a" }] })).toThrow(/endpoints\[1\]\.id: duplicate endpoint id "a"/);
  });

  it("explains an unreadable or broken file", () => {
    expect(() => loadConfigFile("/nonexistent/emulator.config.json")).toThrow(/cannot read config file .*no such file/);
    expect(() => loadConfigFile(`${root}package-lock.json`)).toThrow(/is invalid/);
  });

  it("ships a valid emulator.config.json and an up-to-date JSON Schema for it", () => {
    const shipped = loadConfigFile(`${root}emulator.config.json`);
    expect(shipped.config.endpoints.length).toBeGreaterThan(0);
    const committed = JSON.parse(readFileSync(`${root}schema/emulator.config.schema.json`, "utf8"));
    expect(committed, "schema/emulator.config.schema.json is stale: run npm run schema").toEqual(configJsonSchema());
  });
});

describe("command line", () => {
  it("parses flags, with MINIPOD_* variables as fallbacks", () => {
    const o = parseCli(["--port", "0", "--clock", "manual", "--db", "x.db"], { MINIPOD_HOST: "0.0.0.0", MINIPOD_PORT: "9" }, "/nowhere");
    expect(o).toMatchObject({ port: 0, clock: "manual", db: "x.db", host: "0.0.0.0", config: undefined });
    expect(parseCli([], { MINIPOD_CLOCK: "auto" }, "/nowhere").clock).toBe("auto");
    expect(parseCli(["--python", "/venv/bin/python"], {}, "/nowhere").python).toBe("/venv/bin/python");
    expect(parseCli([], { MINIPOD_PYTHON: "python3.12" }, "/nowhere").python).toBe("python3.12");
    expect(parseCli([], {}, "/nowhere").python).toBeUndefined();
    expect(parseCli([], {}, "/nowhere")).toMatchObject({ port: 8080, host: "127.0.0.1" });
    expect(parseCli([], {}, root).config).toBe(`${root}emulator.config.json`);
  });

  it("refuses bad flags with a message naming them", () => {
    expect(() => parseCli(["--port", "x"], {})).toThrow(/--port must be an integer/);
    expect(() => parseCli(["--clock", "fast"], {})).toThrow(/--clock must be "real", "manual" or "auto", got "fast"/);
    expect(() => parseCli(["--bogus"], {})).toThrow(/^unknown flag --bogus\n\nUsage: minipod/);
    expect(() => parseCli(["--prot", "0"], {})).toThrow(/^unknown flag --prot: did you mean --port\?\n\nUsage: minipod/);
    expect(() => parseCli(["--clok=manual"], {})).toThrow(/^unknown flag --clok: did you mean --clock\?/);
    expect(() => parseCli(["-x"], {})).toThrow(/^unknown flag -x\n/);
    expect(() => parseCli(["--speed=-2"], {})).toThrow(/--speed must be a positive number/);
  });
});
