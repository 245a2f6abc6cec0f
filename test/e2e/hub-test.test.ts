import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { run } from "../support/python-package.js";
import { PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SAMPLE = join(ROOT, "test/fixtures/hub-worker");

/**
 * `minipod hub-test` on a sample worker (test/fixtures/hub-worker) run by the service's own worker
 * runtime: its .runpod/tests.json has a test that passes, one whose handler raises and one that
 * hangs past its timeout; hub.json's input default and tests.json's config.env reach the handler.
 */
describe.skipIf(!pythonAvailable())("minipod hub-test", { timeout: 60_000 }, () => {
  it("runs each test as a job, prints the table, writes JUnit XML and exits 1 when one fails", async () => {
    const junit = join(mkdtempSync(join(tmpdir(), "minipod-hub-")), "hub.xml");
    const { code, output } = await run(process.execPath, [join(ROOT, "bin/minipod.js"), "hub-test", SAMPLE, "--python", PYTHON, "--junit", junit], { env: pythonEnv(), wallMs: 50_000 });
    expect(code, output).toBe(1);
    expect(output).toContain("3 test(s) from .runpod/tests.json, .runpod/hub.json checked; worker: /usr/bin/python3 -u handler.py (env GREETING, MODEL_NAME)");
    expect(output).toMatch(/^ {2}greets +passed +\d+\.\d\d s$/m);
    expect(output).toMatch(/^ {2}refuses +FAILED +\d+\.\d\d s +FAILED: ValueError: refused: no GPU$/m);
    expect(output).toMatch(/^ {2}hangs +TIMED OUT +\d+\.\d\d s +not completed within 1500 ms \(still IN_PROGRESS\)$/m);
    expect(output).toContain("2 of 3 failed");
    const xml = readFileSync(junit, "utf8");
    expect(xml).toMatch(/<testsuite name="hub-test" tests="3" failures="2" errors="0" skipped="0"/);
    expect(xml).toMatch(/<testcase classname="hub-test" name="greets" time="[\d.]+"\/>/);
    expect(xml).toContain('<failure type="failed" message="FAILED: ValueError: refused: no GPU">');
    expect(xml).toContain('<failure type="timed out" message="not completed within 1500 ms (still IN_PROGRESS)">');
    // The handler saw tests.json's GREETING (over hub.json's) and hub.json's input default.
    expect(xml).toContain("answer {'greeting': 'hello, minipod', 'model': 'tiny'}");
  });
});
