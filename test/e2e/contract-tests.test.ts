// docs/contract-tests.md's examples, as written, in both languages and against both targets: a
// minipod of their own (nothing set), and a second minipod named by MINIPOD_TARGET_URL, as the
// real service would be, where the test marked emulator-only is skipped saying why.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { pythonPackageAvailable, run } from "../support/python-package.js";
import { PYTHON, pythonEnv } from "../support/python.js";
import { blocksOf } from "../support/readme.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, "");

/** The "remote" target: another minipod, whose endpoint has an id of its own (the suite maps its name to it). */
let remote: Emulator;
let remoteEnv: Record<string, string>;
beforeAll(async () => {
  remote = await createEmulator({ config: { endpoints: [{ id: "their-worker-id", handler: "scripted", workersMin: 1 }] } });
  remoteEnv = { MINIPOD_TARGET_URL: `${remote.url}/v2`, MINIPOD_TARGET_KEY: "a-key-of-theirs", MINIPOD_TARGET_ENDPOINTS: "worker=their-worker-id" };
});
afterAll(() => remote?.close());

/** Runs one test file with the repository's vitest, in a process of its own, with `extra` in its environment. */
function vitest(file: string, extra: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "minipod-contract-"));
  const config = join(dir, "vitest.config.mjs");
  writeFileSync(config, `export default { test: { root: ${JSON.stringify(ROOT)}, include: [${JSON.stringify(file)}], testTimeout: 30000 } };\n`);
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST") && !k.startsWith("MINIPOD_TARGET"))), NO_COLOR: "1", ...extra };
  const proc = spawn(process.execPath, [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", config, "--root", ROOT], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  proc.stdout.on("data", (d: Buffer) => (output += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) =>
    proc.once("exit", (code) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, output: plain(output) });
    }),
  );
}

describe("docs/contract-tests.md in JavaScript", { timeout: 120_000 }, () => {
  const [suite] = blocksOf("docs/contract-tests.md", "In JavaScript", "ts");
  const name = `test/examples/contract-${process.pid}.tmp.test.ts`;
  beforeAll(() => writeFileSync(join(ROOT, name), suite!.text.replace('from "minipod/contract"', `from ${JSON.stringify(join(ROOT, "dist/contract.js"))}`)));
  afterAll(() => rmSync(join(ROOT, name), { force: true }));

  it("passes whole on a minipod of its own", async () => {
    const { code, output } = await vitest(name, {});
    expect(code, output).toBe(0);
    expect(output).toMatch(/Tests\s+5 passed \(5\)/);
  });

  it("passes against a second minipod named as the target, skipping the emulator-only test with its reason", async () => {
    const before = (await remote.requests({ endpoint: "their-worker-id" })).count;
    const { code, output } = await vitest(name, remoteEnv);
    expect(code, output).toBe(0);
    expect(output).toMatch(/Tests\s+4 passed \| 1 skipped \(5\)/);
    expect(output).toContain(`minipod/contract: target ${remote.url}/v2 (MINIPOD_TARGET_URL); tests marked emulatorOnly are skipped`);
    // The suite's calls reached the named target, under the id the map gave.
    expect((await remote.requests({ endpoint: "their-worker-id" })).count).toBeGreaterThan(before);
  });
});

const python = pythonPackageAvailable();

describe.skipIf(!python)("docs/contract-tests.md in Python", { timeout: 120_000 }, () => {
  const [conftest, tests] = blocksOf("docs/contract-tests.md", "In Python", "python");
  const project = mkdtempSync(join(tmpdir(), "minipod-contract-py-"));
  beforeAll(() => {
    writeFileSync(join(project, "conftest.py"), conftest!.text);
    writeFileSync(join(project, "test_contract.py"), tests!.text);
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));
  /**
   * pytest in the project, the package from this clone's python/src (its plugin named, as an install registers it;
   * the automatic load is off, so a build's minipod.egg-info in python/src cannot register it twice).
   */
  const pytest = (extra: Record<string, string>) =>
    run(PYTHON, ["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "minipod.pytest_plugin"], {
      cwd: project,
      env: { ...pythonEnv({ PYTHONDONTWRITEBYTECODE: "1", PYTHONPATH: join(ROOT, "python/src"), PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" }), ...extra },
      wallMs: 110_000,
    });

  it("passes whole on the plugin's minipod", async () => {
    const { code, output } = await pytest({});
    expect(code, output).toBe(0);
    expect(output).toMatch(/5 passed/);
  });

  it("passes against a second minipod named as the target, skipping the emulator-only test with its reason", async () => {
    const { code, output } = await pytest(remoteEnv);
    expect(code, output).toBe(0);
    expect(output).toMatch(/4 passed, 1 skipped/);
    expect(output).toContain(`emulator only: needs minipod's control API (faults, clock, journal), which ${remote.url}/v2 has not (MINIPOD_TARGET_URL)`);
  });
});
