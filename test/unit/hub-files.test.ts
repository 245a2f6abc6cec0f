import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readHubFiles } from "../../src/cli/hub-files.js";
import { junit, table } from "../../src/cli/hub-test.js";

function folder(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "minipod-hubfiles-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), typeof content === "string" ? content : JSON.stringify(content));
  }
  return dir;
}

const HUB = { title: "T", description: "D", type: "serverless", category: "image", config: { runsOn: "CPU", containerDiskInGb: 5, cpuFlavor: "cpu3c" } };

describe("reading a worker's Hub files", () => {
  it("reads the tests, and the environment: hub.json's values and input defaults, then tests.json's config.env", () => {
    const dir = folder({
      ".runpod/hub.json": { ...HUB, config: { ...HUB.config, env: [{ key: "A", value: 1 }, { key: "B", input: { type: "string", default: "b" } }, { key: "C", value: "hub" }] } },
      ".runpod/tests.json": { tests: [{ name: "one", input: { x: 1 }, timeout: 500 }, { name: "two", input: {} }], config: { env: [{ key: "C", value: "tests" }] } },
    });
    const files = readHubFiles(dir);
    expect(files.problems).toEqual([]);
    expect(files.tests).toEqual([{ name: "one", input: { x: 1 }, timeout: 500 }, { name: "two", input: {}, timeout: undefined }]);
    expect(files.env).toEqual({ A: "1", B: "b", C: "tests" });
    expect(files).toMatchObject({ testsSource: ".runpod/tests.json", hubSource: ".runpod/hub.json", notes: [] });
  });

  it("names each field of hub.json and tests.json that the Hub would refuse", () => {
    const dir = folder({
      ".runpod/hub.json": { title: "", type: "pod", category: "music", iconUrl: "ftp://x", config: { runsOn: "GPU", containerDiskInGb: 0, env: [{ value: 1 }] } },
      ".runpod/tests.json": { tests: [{ name: "a", input: "text" }, { name: "b", input: {}, timeout: -1 }, { input: {} }, { name: "d", input: {} }, { name: "d", input: {} }] },
    });
    expect(readHubFiles(dir).problems).toEqual([
      ".runpod/hub.json title: required, a non-empty string",
      ".runpod/hub.json description: required, a non-empty string",
      '.runpod/hub.json type: expected "serverless", got string "pod"',
      '.runpod/hub.json category: expected one of audio, embedding, language, video, image; got string "music"',
      '.runpod/hub.json iconUrl: expected an http(s) URL, got string "ftp://x"',
      ".runpod/hub.json config.containerDiskInGb: required, a positive integer (GB); got number 0",
      ".runpod/hub.json config.gpuCount: required when runsOn is \"GPU\", a positive integer; got nothing",
      '.runpod/hub.json config.gpuIds: required when runsOn is "GPU", comma-separated pool ids such as "ADA_24,-NVIDIA RTX 4090"; got nothing',
      '.runpod/hub.json config.env[0]: expected {"key": "NAME", "value": ...} with a non-empty string key',
      '.runpod/tests.json tests[0].input (a): required, the job\'s input object; got string "text"',
      ".runpod/tests.json tests[1].timeout (b): expected a positive integer of milliseconds, got number -1",
      ".runpod/tests.json tests[2].name: required, a non-empty string",
      '.runpod/tests.json tests[4].name: "d" is used twice',
    ]);
  });

  it("falls back to test_input.json, notes a missing hub.json, and says when there are no tests at all", () => {
    const single = readHubFiles(folder({ "test_input.json": { input: { prompt: "p" } } }));
    expect(single).toMatchObject({ problems: [], testsSource: "test_input.json", hubSource: undefined, tests: [{ name: "test_input", input: { prompt: "p" } }] });
    expect(single.notes[0]).toMatch(/^no \.runpod\/hub\.json: the Hub needs one/);
    expect(readHubFiles(folder({ ".runpod/tests.json": "{ not json" })).problems[0]).toMatch(/^\.runpod\/tests\.json: not valid JSON/);
    expect(readHubFiles(folder({ "hub.json": HUB })).problems[0]).toMatch(/^no tests in .*: write \.runpod\/tests\.json/);
  });

  it("reports as a table and as JUnit XML, escaped", () => {
    const results = [
      { name: "ok", result: "passed" as const, ms: 120, detail: "" },
      { name: "<bad>", result: "failed" as const, ms: 2000, detail: 'FAILED: "x" & y' },
    ];
    expect(table(results)).toBe(["  test    result   time     detail", "  ok      passed   0.12 s", '  <bad>   FAILED   2.00 s   FAILED: "x" & y'].join("\n"));
    const xml = junit(results, ["line <1>"]);
    expect(xml).toContain('<testsuite name="hub-test" tests="2" failures="1" errors="0" skipped="0" time="2.120">');
    expect(xml).toContain('<testcase classname="hub-test" name="&lt;bad&gt;" time="2.000">');
    expect(xml).toContain('<failure type="failed" message="FAILED: &quot;x&quot; &amp; y">');
    expect(xml).toContain("<system-out>line &lt;1&gt;</system-out>");
  });
});
