import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { clientsFolder, flashClientEnv, flashPython, relayedPython, runFlashPython } from "../support/flash-python.js";
import { recorder, via, type Recorder } from "../support/recorder.js";

// runpod-flash, unchanged, in live provisioning (FLASH_IS_LIVE_PROVISIONING=true) and pointed at
// minipod by its URL variables: its @Endpoint functions and classes run on worker processes of
// minipod's own Flash runtime, started for the endpoints it saves with the runpod/flash-cpu image.

const python = flashPython();
const SCENARIOS = fileURLToPath(new URL("../fixtures/flash/scenarios.py", import.meta.url));


describe.skipIf(!python)("runpod-flash's live path through minipod: @Endpoint functions and classes on minipod's Flash worker", { timeout: 180_000 }, () => {
  let emu: Emulator;
  let rec: Recorder;
  const workerLines: string[] = [];
  const config = {};
  beforeAll(async () => {
    // The worker processes: this interpreter, with the service's worker runtime (runpod 1.12.0) first on the path.
    const relayed = relayedPython(python!);
    vi.stubEnv("MINIPOD_PYTHON", relayed.python);
    vi.stubEnv("PYTHONPATH", join(clientsFolder()!, "runpod-python"));
    emu = await createEmulator({ clock: "real", config, log: (line) => workerLines.push(line) });
    // What runpod-flash sends to GraphQL and /v2, and what the worker processes send, recorded by `npm run contracts:record`.
    rec = await recorder(emu.url, { client: "runpod-flash (live provisioning), its functions on minipod's Flash worker", test: "test/e2e/flash-sdk.test.ts", clock: "real", config });
    relayed.to(emu.url, rec.url);
  });
  afterAll(async () => {
    await rec?.close();
    await emu?.close();
    vi.unstubAllEnvs();
  });

  it("a function, a class with its state across calls, an async function, an error with its traceback, stdout, a missing dependency", async () => {
    const project = mkdtempSync(join(tmpdir(), "minipod-flash-project-"));
    cpSync(SCENARIOS, join(project, "scenarios.py"));
    const about = "@Endpoint functions and a class saved through GraphQL and called on /v2: a result, state across calls, async, a GPU endpoint, an error with its traceback, a missing dependency";
    rec.scenario("flash-live", { polls: true, about });
    const { code, output } = await runFlashPython(["scenarios.py"], project, flashClientEnv(via(emu.url)));
    rec.pause();
    expect(code, output).toBe(0);
    const said = (label: string) => output.split("\n").find((l) => l.startsWith(`${label}: `)) ?? `(no "${label}:" line in)\n${output}`;
    expect(said("add")).toBe("add: 5");
    expect(said("bump")).toBe("bump: 15 16");
    expect(said("slow")).toBe("slow: 42");
    // A GPU endpoint (every data center the SDK lists, some unknown to minipod) runs on the CPU.
    expect(said("gpu")).toBe("gpu: {'rows': 3, 'cpus': True}");
    expect(said("fails")).toBe("fails: Remote execution failed: bad input 7 | traceback: True");
    expect(output).toContain('raise ValueError(f"bad input {x}")');
    expect(said("needs")).toMatch(/^needs: Remote execution failed: dependencies not installed in the worker's Python \(.*\): surely-not-a-package\. .* -m pip install surely-not-a-package$/);
    // What the function printed: in its answer (runpod-flash shows it) and in the worker's output.
    expect(output).toContain("adding 2 and 3");
    expect(workerLines.some((l) => l.endsWith("] adding 2 and 3"))).toBe(true);
    // Each @Endpoint is an endpoint of the runpod/flash-cpu image, served by worker processes.
    expect(emu.endpoints().map((e) => e.handler)).toEqual(Array(6).fill("external"));
  });
});
