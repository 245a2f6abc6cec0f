import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEmulator } from "../../src/compose/emulator.js";
import { exposureWarnings } from "../../src/compose/exposure.js";
import { forStarts, startCli } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "minipod-exposure-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NO_CONTROL_KEY = "no controlKey is set: anyone who can reach it can reset it, move its clock, plant faults, take snapshots and download the export with every job's input";

describe("start-up warns when the control surface is reachable beyond loopback without controlKey", () => {
  it("with auth.keys but no controlKey: in the log and the banner of the CLI", async () => {
    const config = join(dir, "keys.json");
    writeFileSync(config, JSON.stringify({ auth: { keys: [{ key: "k" }] } }));
    const cli = await startCli(["--host", "0.0.0.0", "--clock", "manual", "--config", config]);
    try {
      expect(cli.stderr()).toMatch(/warn +WARNING: minipod is listening on 0\.0\.0\.0, beyond this machine, and no controlKey is set: /);
      expect(cli.stderr()).toContain("Set controlKey in the config, or bind 127.0.0.1.");
      expect(cli.stderr()).not.toContain("no API keys");
      expect(cli.stdout()).toContain(`  WARNING: minipod is listening on 0.0.0.0, beyond this machine, and ${NO_CONTROL_KEY}`);
    } finally {
      expect(await cli.stop()).toBe(0);
    }
    // Even with the log turned down, the banner says it.
    const quiet = await startCli(["--host", "0.0.0.0", "--clock", "manual", "--config", config, "--log-level", "error"]);
    try {
      expect(quiet.stderr()).not.toContain("WARNING");
      expect(quiet.stdout()).toContain(NO_CONTROL_KEY);
    } finally {
      await quiet.stop();
    }
  }, forStarts(2));

  it("from createEmulator too, and not once both keys are set or on loopback", async () => {
    const lines: string[] = [];
    const open = await createEmulator({ host: "0.0.0.0", config: { auth: { keys: [{ key: "k" }] } }, logLevel: "warn", log: (l) => lines.push(l) });
    try {
      expect(open.warnings).toEqual([expect.stringContaining(NO_CONTROL_KEY)]);
      expect(lines).toEqual([expect.stringContaining(NO_CONTROL_KEY)]);
    } finally {
      await open.close();
    }
    const guarded = await createEmulator({ host: "0.0.0.0", config: { auth: { keys: [{ key: "k" }] }, controlKey: "ck" } });
    try {
      expect(guarded.warnings).toEqual([]);
    } finally {
      await guarded.close();
    }
    const local = await createEmulator({});
    expect(local.warnings).toEqual([]);
    await local.close();
  });

  it("names each missing guard, on every address that is not loopback", () => {
    expect(exposureWarnings("0.0.0.0", { apiKeys: false, controlKey: false })).toEqual([
      expect.stringContaining("no API keys are configured"),
      expect.stringContaining("no controlKey is set"),
    ]);
    expect(exposureWarnings("192.168.1.5", { apiKeys: false, controlKey: true })).toEqual([expect.stringContaining("no API keys are configured")]);
    expect(exposureWarnings("::", { apiKeys: true, controlKey: false })).toHaveLength(1);
    for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) expect(exposureWarnings(host, { apiKeys: false, controlKey: false }), host).toEqual([]);
  });
});
