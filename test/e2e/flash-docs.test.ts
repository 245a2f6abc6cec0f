import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createEmulator } from "../../src/index.js";
import { startCli, type RunningCli } from "../support/cli.js";
import { clientsFolder, flashPython, relayedPython } from "../support/flash-python.js";
import { recorder, via, type Recorder } from "../support/recorder.js";
import { blocksOf, DOC_URL, shellWords } from "../support/readme.js";

// docs/flash.md's walk-through, as written: its commands are the ones checked here, its two Python
// files are written to an empty project, minipod started as the page says, and pytest run there.

const PAGE = "docs/flash.md";
const SECTION = "From pip install to a passing test";
const python = flashPython();

/** The variables the page's `export` lines set. */
function exported(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const [command, ...assignments] = shellWords(line);
    expect(command, line).toBe("export");
    for (const a of assignments) env[a.slice(0, a.indexOf("="))] = a.slice(a.indexOf("=") + 1);
  }
  return env;
}

describe("docs/flash.md", () => {
  it("its commands are the install, minipod with the venv's interpreter, the URL variables and pytest", () => {
    const [install, minipod, exports, pytest] = blocksOf(PAGE, SECTION, "sh").map((b) => b.text);
    expect(install!.split("\n")).toEqual(["python3 -m venv .venv", ". .venv/bin/activate", "pip install runpod-flash pytest"]);
    expect(minipod).toBe("MINIPOD_PYTHON=.venv/bin/python npx minipod");
    expect(exported(exports!)).toEqual({
      RUNPOD_API_KEY: "any-key",
      FLASH_IS_LIVE_PROVISIONING: "true",
      RUNPOD_API_BASE_URL: DOC_URL,
      RUNPOD_ENDPOINT_BASE_URL: `${DOC_URL}/v2`,
      RUNPOD_REST_API_URL: `${DOC_URL}/v1`,
      RUNPOD_HAPI_URL: DOC_URL,
      RUNPOD_CONSOLE_URL: DOC_URL,
    });
    expect(pytest).toBe("pytest");
  });

  it("its rp flash dev commands set the variables test/e2e/sdk2-dev.test.ts runs the SDK 2.x with", () => {
    const [block] = blocksOf(PAGE, "The SDK 2.x apps", "sh");
    const lines = block!.text.split("\n");
    expect(lines.at(-1)).toBe("rp flash dev main.py --once");
    expect(exported(lines.slice(0, -1).join("\n"))).toEqual({
      RUNPOD_API_KEY: "any-key",
      RUNPOD_API_BASE_URL: DOC_URL,
      RUNPOD_ENDPOINT_BASE_URL: `${DOC_URL}/v2`,
      RUNPOD_HAPI_URL: DOC_URL,
    });
  });

  it("its images example is a config minipod takes", async () => {
    const [json] = blocksOf(PAGE, "Your own image is a command", "json");
    const emu = await createEmulator({ config: JSON.parse(json!.text) as object, log: () => {} });
    expect(emu.config.images).toEqual([{ image: "acme/worker", command: ["{python}", "handler.py"], env: { MODEL: "tiny" } }]);
    await emu.close();
  });

  describe.skipIf(!python)("the walk-through, run", { timeout: 240_000 }, () => {
    let cli: RunningCli | undefined;
    let rec: Recorder | undefined;
    afterAll(async () => {
      await rec?.close();
      await cli?.stop();
    });

    it("pytest passes: the endpoints' calls went through minipod's Flash worker", async () => {
      const [hello, tests] = blocksOf(PAGE, SECTION, "python").map((b) => b.text);
      const project = mkdtempSync(join(tmpdir(), "minipod-flash-docs-"));
      writeFileSync(join(project, "hello.py"), hello!);
      writeFileSync(join(project, "test_hello.py"), tests!);
      // minipod as the page starts it, with the service's worker runtime (runpod 1.12.0) first on the workers' path.
      const relayed = relayedPython(python!);
      cli = await startCli([], { MINIPOD_PYTHON: relayed.python, PYTHONPATH: join(clientsFolder()!, "runpod-python") });
      // What runpod-flash and the worker processes send, recorded by `npm run contracts:record`.
      const client = "runpod-flash (live provisioning), docs/flash.md's walk-through under pytest";
      const r = (rec = await recorder(cli.url, { client, test: "test/e2e/flash-docs.test.ts", clock: "real", config: {} }));
      relayed.to(cli.url, r.url);
      r.scenario("flash-docs-walk-through", { polls: true, about: "docs/flash.md's @Endpoint function saved through GraphQL and called on /v2 by its pytest tests" });
      const env = exported(blocksOf(PAGE, SECTION, "sh")[2]!.text);
      for (const [k, v] of Object.entries(env)) env[k] = v.replace(DOC_URL, via(cli.url));
      const home = mkdtempSync(join(tmpdir(), "minipod-flash-home-"));
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const childEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PYTHONDONTWRITEBYTECODE: "1", ...env };
        const child = spawn(python!, ["-m", "pytest", "-q", "-p", "no:cacheprovider"], { cwd: project, env: childEnv });
        let text = "";
        child.stdout.on("data", (d: Buffer) => (text += d.toString()));
        child.stderr.on("data", (d: Buffer) => (text += d.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), 200_000);
        child.once("close", (c) => {
          clearTimeout(timer);
          resolve({ code: c, output: text });
        });
      });
      r.pause();
      expect(code, output).toBe(0);
      expect(output).toMatch(/2 passed/);
      expect(cli.stderr() + cli.stdout()).toContain("] greeting world");
    });
  });
});
