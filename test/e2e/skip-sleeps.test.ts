// docs/python.md's example of minipod_skip_sleeps, as written, in an empty project: the service's
// client polls a 30 s job on minipod's clock. (python/tests/test_skip_sleeps.py, run with the
// package's suite, counts the sleeps of a status loop, of asyncio and of stream().)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { pythonPackageAvailable, run } from "../support/python-package.js";
import { PYTHON, PYTHONPATH, pythonEnv, runpodMissing } from "../support/python.js";
import { blocksOf } from "../support/readme.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
// The example drives the service's client: skipped with one line where it cannot be imported.
const noRunpod = pythonPackageAvailable() ? runpodMissing() : "the Python package cannot be installed";
if (noRunpod) console.warn(`skipped test/e2e/skip-sleeps.test.ts: ${noRunpod}`);
const available = noRunpod === undefined;

describe.skipIf(!available)("docs/python.md: a client's own sleeps", { timeout: 120_000 }, () => {
  const project = mkdtempSync(join(tmpdir(), "minipod-skip-sleeps-"));
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it("runs as written: runpod's output() polls a 30 s job on the virtual clock", async () => {
    const [example] = blocksOf("docs/python.md", "A client's own sleeps", "python");
    writeFileSync(join(project, "test_sleeps.py"), example!.text);
    const { code, output } = await run(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "minipod.pytest_plugin"], {
      cwd: project,
      // The plugin named, the automatic load off: a build's minipod.egg-info in python/src would register it twice.
      env: pythonEnv({ PYTHONPATH: `${join(ROOT, "python/src")}:${PYTHONPATH}`, PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1" }),
      wallMs: 110_000,
    });
    expect(code, output).toBe(0);
    expect(output).toMatch(/1 passed/);
  });
});
