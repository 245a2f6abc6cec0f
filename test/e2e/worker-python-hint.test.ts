import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { PYTHON } from "../support/python.js";
import { run } from "../support/python-package.js";

const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));

/** `minipod worker -- python handler.py` with a Python that lacks the service's library says what to do. */
describe("minipod worker with a Python that has no runpod", { timeout: 30_000 }, () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await createEmulator({ config: { endpoints: [{ id: "py", handler: "external" }] } });
  });
  afterAll(() => emu?.close());

  it.skipIf(spawnSync(PYTHON, ["-c", ""]).status !== 0)("adds how to install it to the ModuleNotFoundError", async () => {
    // -S: no site-packages, so `import runpod` fails as on a Python where it was never installed.
    // (Asynchronously: the emulator the worker calls lives in this process.)
    const r = await run(process.execPath, [BIN, "worker", "--url", emu.url, "--", PYTHON, "-S", "-c", "import runpod"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, wallMs: 25_000 });
    expect(r.output).toMatch(/ModuleNotFoundError: No module named 'runpod'/);
    expect(r.output).toContain("minipod worker: the command's Python cannot import runpod, the service's library: install it in that Python's environment (pip install runpod)");
    expect(r.code).toBe(1);
  });
});
