import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { clientsFolder, flashClientEnv, flashPython, runFlashPython } from "../support/flash-python.js";
import { blocksOf, curlRequest } from "../support/readme.js";

// docs/flash.md's deploy walk-through, run with runpod-flash unchanged: `flash deploy` (its build,
// the app, environment, artifact upload, build, deploy and endpoints, all to minipod), then the
// same script calling the deployed endpoints through /v2/flash and minipod's Flash worker on the
// deployed path; then an edit deployed again, whose new code the next call runs.

const PAGE = "docs/flash.md";
const SECTION = "Deploy an app: flash deploy";
const RUN_SECTION = "flash run: the local development server";
const python = flashPython();

/**
 * runpod-flash's `flash` command imports `questionary` (prompts) at start, which is not among the
 * wheels here: a stand-in with the three prompts it names, each answering yes or nothing.
 */
function questionaryStandIn(): string {
  const dir = mkdtempSync(join(tmpdir(), "minipod-questionary-"));
  mkdirSync(join(dir, "questionary"));
  writeFileSync(
    join(dir, "questionary", "__init__.py"),
    [
      "class _Answer:",
      "    def __init__(self, value):",
      "        self.value = value",
      "    def ask(self):",
      "        return self.value",
      "def confirm(*_, **__):",
      "    return _Answer(True)",
      "def text(*_, **__):",
      '    return _Answer("")',
      "def checkbox(*_, **__):",
      "    return _Answer([])",
      "",
    ].join("\n"),
  );
  return dir;
}


/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Ends `child` as Ctrl+C does, then for sure: bounded. */
function interrupt(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGINT");
  });
}

describe("docs/flash.md: flash deploy and flash run", () => {
  it("its commands are: live provisioning off, flash deploy, the script run; flash run and a curl of it", () => {
    const [commands] = blocksOf(PAGE, SECTION, "sh");
    expect(commands!.text.split("\n")).toEqual(["unset FLASH_IS_LIVE_PROVISIONING", "flash deploy", "python main.py"]);
    const [serve, call] = blocksOf(PAGE, RUN_SECTION, "sh").map((b) => b.text);
    expect(serve).toBe("flash run");
    expect(curlRequest(call!).url).toBe("http://localhost:8888/main/greet/runsync");
  });

  describe.skipIf(!python)("the walk-through, run with runpod-flash", { timeout: 300_000 }, () => {
    let emu: Emulator;
    const workerLines: string[] = [];
    beforeAll(async () => {
      // The worker processes: this interpreter, with the service's worker runtime (runpod 1.12.0) first on the path.
      vi.stubEnv("MINIPOD_PYTHON", python!);
      vi.stubEnv("PYTHONPATH", join(clientsFolder()!, "runpod-python"));
      emu = await createEmulator({ clock: "real", config: {}, log: (line) => workerLines.push(line) });
    });
    afterAll(async () => {
      await emu?.close();
      vi.unstubAllEnvs();
    });

    it("flash deploy saves the app to minipod; the script's calls run the deployed build; a new deploy runs the new code", async () => {
      const [main] = blocksOf(PAGE, SECTION, "python").map((b) => b.text);
      const [printed] = blocksOf(PAGE, SECTION, "text").map((b) => b.text);
      const project = join(mkdtempSync(join(tmpdir(), "minipod-flash-deploy-")), "greetings");
      mkdirSync(project);
      writeFileSync(join(project, "main.py"), main!);
      const { FLASH_IS_LIVE_PROVISIONING: _live, ...env } = flashClientEnv(emu.url);
      const flash = (...args: string[]) => runFlashPython(["-m", "runpod_flash.cli.main", ...args], project, { ...env, PYTHONPATH: questionaryStandIn() });

      const deployed = await flash("deploy");
      expect(deployed.code, deployed.output).toBe(0);
      expect(deployed.output).toContain("deployed to production");
      const first = await runFlashPython(["main.py"], project, env);
      expect(first.code, first.output).toBe(0);
      expect(first.output.trim()).toBe(printed);
      // What the function printed is in the worker's output.
      expect(workerLines.some((l) => l.endsWith("] greeting world"))).toBe(true);
      // Given every one of the service's URLs, runpod-flash in the worker warns of no partial override.
      expect(workerLines.filter((l) => l.includes("Partial Runpod URL override"))).toEqual([]);

      // Its resources, as GraphQL shows them: the app, its environment with the build active and two endpoints.
      const res = await fetch(`${emu.url}/graphql`, {
        method: "POST",
        headers: { authorization: "Bearer any-key", "content-type": "application/json" },
        body: JSON.stringify({ query: "{ myself { flashApps { name flashEnvironments { name state activeBuildId endpoints { name } } flashBuilds { id } } } }" }),
      });
      const [app] = ((await res.json()) as any).data.myself.flashApps;
      expect(app.name).toBe("greetings");
      expect(app.flashEnvironments).toHaveLength(1);
      expect(app.flashEnvironments[0]).toMatchObject({ name: "production", state: "HEALTHY", activeBuildId: app.flashBuilds[0].id });
      expect(app.flashEnvironments[0].endpoints.map((e: { name: string }) => e.name).sort()).toEqual(["divider", "greeter"]);

      // An edit, deployed again: the next call runs the new build.
      writeFileSync(join(project, "main.py"), readFileSync(join(project, "main.py"), "utf8").replace('f"hello {name}!"', 'f"hello again {name}!"'));
      const again = await flash("deploy");
      expect(again.code, again.output).toBe(0);
      const second = await runFlashPython(["main.py"], project, env);
      expect(second.code, second.output).toBe(0);
      expect(second.output.trim().split("\n")[0]).toBe("hello again world!");
      expect(emu.endpoints().filter((e) => e.handler === "external")).toHaveLength(2);
    });

    it("flash run serves the project's functions locally, called live through minipod; stopped, it deletes its endpoints", async () => {
      const [main] = blocksOf(PAGE, SECTION, "python").map((b) => b.text);
      const [, call] = blocksOf(PAGE, RUN_SECTION, "sh").map((b) => b.text);
      const project = join(mkdtempSync(join(tmpdir(), "minipod-flash-run-")), "greetings");
      mkdirSync(project);
      writeFileSync(join(project, "main.py"), main!);
      const before = emu.endpoints().length;
      const port = await freePort();
      const { FLASH_IS_LIVE_PROVISIONING: _live, ...env } = flashClientEnv(emu.url);
      const serverEnv = { ...env, FLASH_PORT: String(port), PYTHONPATH: questionaryStandIn() };
      const server = spawn(python!, ["-m", "runpod_flash.cli.main", "run"], { cwd: project, env: serverEnv, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`flash run did not start in 60 s:\n${output}`)), 60_000);
          const seen = (d: Buffer) => {
            output += d.toString();
            if (output.includes(`localhost:${port}`)) {
              clearTimeout(timer);
              resolve();
            }
          };
          server.stdout!.on("data", seen);
          server.stderr!.on("data", seen);
          server.once("close", () => reject(new Error(`flash run ended:\n${output}`)));
        });
        const { url, init } = curlRequest(call!);
        // Its server answers once uvicorn listens, a moment after the table is printed.
        let answer: Response | undefined;
        for (let tries = 0; !answer && tries < 100; tries++) {
          answer = await fetch(url.replace("localhost:8888", `localhost:${port}`), init).catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 200)));
        }
        expect(answer?.status, output).toBe(200);
        expect(await answer!.json()).toMatchObject({ status: "COMPLETED", output: "hello world!" });
        expect(emu.endpoints().length).toBe(before + 1);
      } finally {
        await interrupt(server);
      }
      expect(emu.endpoints().length, output).toBe(before);
    });
  });
});
