// Examples that start their own emulator with createEmulator, run as written on its default clock
// (auto), with nothing moving time by hand: the README's test suite under vitest, and the Hono
// app of docs/load-balancing.md, whose first request waits for a cold start.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { blocksOf, runExample } from "../support/readme.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs one test file with the repository's vitest, in a process of its own; its exit code and output. */
function vitest(file: string): Promise<{ code: number | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "minipod-vitest-"));
  const config = join(dir, "vitest.config.mjs");
  writeFileSync(config, `export default { test: { root: ${JSON.stringify(ROOT)}, include: [${JSON.stringify(file)}], testTimeout: 30000 } };\n`);
  // The outer run's own variables would make the inner vitest think it is one of its workers.
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST"))), NO_COLOR: "1" };
  const proc = spawn(process.execPath, [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", config, "--root", ROOT], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  proc.stdout.on("data", (d: Buffer) => (output += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => proc.once("exit", (code) => resolve({ code, output })));
}

describe("the README's test suite (In a test suite)", () => {
  it("passes as written under vitest, on createEmulator's default clock", { timeout: 120_000 }, async () => {
    const [suite] = blocksOf("README.md", "In a test suite", "ts");
    expect(suite!.text).not.toContain("clock:");
    expect(suite!.text).not.toContain("advance(");
    // In the repository's test folder, so "vitest" and "runpod-sdk" resolve as in a project; minipod is the built package.
    const name = `test/examples/readme-suite-${process.pid}.tmp.test.ts`;
    writeFileSync(join(ROOT, name), suite!.text.replace('from "minipod"', `from ${JSON.stringify(join(ROOT, "dist/index.js"))}`));
    try {
      const { code, output } = await vitest(name);
      expect(code, output).toBe(0);
      // The colours of vitest's report (escape sequences) aside.
      // eslint-disable-next-line no-control-regex
      expect(output.replace(/\x1b\[[0-9;]*m/g, "")).toMatch(/Tests\s+3 passed/);
    } finally {
      rmSync(join(ROOT, name), { force: true });
    }
  });
});

describe("the README's test suite, type-checked", () => {
  it("compiles under the strict TypeScript settings a project starts with, imports included", { timeout: 180_000 }, () => {
    const [suite] = blocksOf("README.md", "In a test suite", "ts");
    const name = `test/examples/readme-strict-${process.pid}.tmp.ts`;
    const config = `tsconfig.readme-${process.pid}.tmp.json`;
    writeFileSync(join(ROOT, name), suite!.text.replace('from "minipod"', 'from "../../src/index.js"'));
    writeFileSync(join(ROOT, config), JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { strict: true, noEmit: true }, include: [name] }));
    try {
      const r = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", config], { cwd: ROOT, encoding: "utf8" });
      expect(r.stdout + r.stderr).toBe("");
      expect(r.status).toBe(0);
    } finally {
      rmSync(join(ROOT, name), { force: true });
      rmSync(join(ROOT, config), { force: true });
    }
  });
});

describe("docs/load-balancing.md: a Hono app as an in-process handler", () => {
  it("answers its first request, which waits for a worker's cold start, on the default clock", async () => {
    const [example] = blocksOf("docs/load-balancing.md", "What answers the requests", "ts");
    expect(example!.text).toContain("createEmulator({ config");
    const { code, printed, err } = await runExample(example!.text, "http://127.0.0.1:8080");
    expect(code, err).toBe(0);
    expect(printed).toEqual([{ text: "hi" }]);
  });
});
