// The package as a user gets it: `npm pack`, the tarball installed into an empty project, and
// there `npx minipod`, `import { createEmulator } from "minipod"` and the types.
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocksOf } from "../support/readme.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const require = createRequire(import.meta.url);
const TSC = require.resolve("typescript/bin/tsc");
/** The whole of each npm step, so that a registry that does not answer fails the test rather than hanging it. */
const STEP_MS = 150_000;

/**
 * npm's environment without the `npm_*` variables of the `npm test` this may run under: those
 * (npm_config_local_prefix above all) would point the npm run here at this repository.
 */
const cleanEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== "INIT_CWD"));

/**
 * A type-check's bound, in seconds of CPU (about 10 here): tsc does only CPU work, so this stops
 * a runaway check and lets a busy machine take its time (its tests' timeouts are TYPE_CHECK_MS).
 */
const TYPE_CHECK_CPU_S = 120;
const TYPE_CHECK_MS = 600_000;

/** `tsc -p tsconfig.json` in `cwd`, run without blocking, under the CPU bound (`ulimit -t`). */
function typeCheck(cwd: string): Promise<{ status: number | null; signal: NodeJS.Signals | null; output: string }> {
  const child = spawn("/bin/sh", ["-c", `ulimit -t ${TYPE_CHECK_CPU_S} && exec "$0" "$@"`, process.execPath, TSC, "-p", "tsconfig.json"], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once("close", (status, signal) => resolve({ status, signal, output })));
}

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  const r = spawnSync(command, args, { cwd, env: cleanEnv(), encoding: "utf8", timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed with ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

describe("the package, packed and installed into an empty project", () => {
  const dir = mkdtempSync(join(tmpdir(), "minipod-package-"));
  const project = join(dir, "project");
  let files: string[] = [];

  beforeAll(
    () => {
      // --ignore-scripts: the package is made from the dist/ that test/global-setup.ts built for this
      // run; its `prepare` script would build dist/ again while other test files run the CLI from it.
      const packed = JSON.parse(run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], ROOT).stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
      files = packed[0]!.files.map((f) => f.path);
      mkdirSync(project);
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "try-minipod", private: true, type: "module" }));
      // Its dependencies come from the registry, or npm's cache when it has them. better-sqlite3
      // compiles its native binding at install (minutes: no prebuilt binary is downloaded here), so
      // scripts are skipped and this repository's binding, built from the same version, is reused.
      const sqlite = JSON.parse(readFileSync(require.resolve("better-sqlite3/package.json"), "utf8")) as { version: string };
      const typesNode = JSON.parse(readFileSync(require.resolve("@types/node/package.json"), "utf8")) as { version: string };
      run(
        "npm",
        ["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", join(dir, packed[0]!.filename), `better-sqlite3@${sqlite.version}`, `@types/node@${typesNode.version}`],
        project,
      );
      const binding = join("build", "Release", "better_sqlite3.node");
      const target = join(project, "node_modules", "better-sqlite3", binding);
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(join(dirname(require.resolve("better-sqlite3/package.json")), binding), target);
    },
    2 * STEP_MS + 30_000,
  );
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("ships what a user needs and nothing else", () => {
    for (const needed of [
      "package.json",
      "README.md",
      "LICENSE",
      "bin/minipod.js",
      "dist/minipod.js",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/vitest.js",
      "dist/vitest.d.ts",
      "dist/contract.js",
      "dist/contract.d.ts",
      "schema/emulator.config.schema.json",
      "emulator.config.json",
      "fixtures/handlers/text-generator.ts",
      "docs/configuration.md",
      "docs/fidelity.md",
      // minipod's own workers for the service's runtime images (the config's images), run from the package.
      "python/src/minipod/runtimes/flash.py",
      "python/src/minipod/runtimes/job_loop.py",
      "python/src/minipod/runtimes/queue.py",
      "python/src/minipod/runtimes/api.py",
      "python/src/minipod/runtimes/flash_lb.py",
    ]) {
      expect(files, needed).toContain(needed);
    }
    // The README links the reference pages of docs/, so they ship; the screenshot does not.
    const unneeded = files.filter(
      (f) => /^(src|test|bench|scripts|node_modules|coverage)\//.test(f) || (f.startsWith("docs/") && !f.endsWith(".md")) || f.endsWith(".map") || f.endsWith(".db"),
    );
    expect(unneeded).toEqual([]);
    // Nothing left in dist/ from sources that are gone: every compiled file has its source.
    const stale = files
      .filter((f) => f.startsWith("dist/") && f.endsWith(".js") && f !== "dist/minipod.js")
      .filter((f) => !["ts", "tsx"].some((ext) => existsSync(join(ROOT, f.replace(/^dist/, "src").replace(/\.js$/, `.${ext}`)))));
    expect(stale).toEqual([]);
  });

  it("npx minipod starts with the demo endpoints, and runs a job of each kind", async () => {
    // detached: its own process group, which the Ctrl-C of a terminal signals (npx and minipod).
    const proc = spawn("npx", ["minipod", "--port", "0", "--clock", "manual"], { cwd: project, env: cleanEnv(), detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
    let url = "";
    try {
      url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner:\n${out}\n${err}`)), 60_000);
        proc.stdout.on("data", () => {
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m && out.includes("text-gen")) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        void exited.then((code) => (clearTimeout(timer), reject(new Error(`exited with ${code}:\n${out}\n${err}`))));
      });
      expect(out).toContain(`config      ${join(project, "node_modules", "minipod", "emulator.config.json")}: the demo endpoints`);
      const auth = { authorization: "any-key" };
      const submit = async (endpoint: string, input: object) =>
        ((await (await fetch(`${url}/v2/${endpoint}/run`, { method: "POST", headers: auth, body: JSON.stringify({ input }) })).json()) as { id: string }).id;
      const echo = await submit("echo", { prompt: "hi" });
      const words = await submit("text-gen", { prompt: "one two", delayMs: 500 }); // the TypeScript handler module the package ships
      await fetch(`${url}/_emulator/clock/advance`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ms: 1000 }) });
      const status = async (endpoint: string, id: string) => (await fetch(`${url}/v2/${endpoint}/status/${id}`, { headers: auth })).json();
      expect(await status("echo", echo)).toMatchObject({ status: "COMPLETED", output: { prompt: "hi" } });
      expect(await status("text-gen", words)).toMatchObject({ status: "COMPLETED", output: { text: ["two", "one"], tokens: 2 } });
    } finally {
      if (proc.exitCode === null) process.kill(-proc.pid!, "SIGINT");
    }
    await exited;
    expect(err).toContain("SIGINT: stopping minipod");
    // Stopped, not left behind by npx.
    await expect(fetch(`${url}/_emulator/clock`)).rejects.toThrow();
  }, 90_000);

  it("gives createEmulator to an ES module, inline handlers included", () => {
    writeFileSync(
      join(project, "try.mjs"),
      `import { createEmulator } from "minipod";
const emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "up", handler: async (input, ctx) => { await ctx.sleep(100); return input.text.toUpperCase(); } }] } });
const res = await fetch(emu.url + "/v2/up/run", { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input: { text: "hello" } }) });
const { id } = await res.json();
const job = await emu.waitForJob("up", id, "COMPLETED");
console.log(JSON.stringify({ output: job.output, executionTime: job.executionTime }));
await emu.close();
`,
    );
    const r = run(process.execPath, ["try.mjs"], project);
    expect(JSON.parse(r.stdout)).toEqual({ output: "HELLO", executionTime: 100 });
  }, 60_000);

  it("gives minipod/contract to an ES module: a target of its own, and the service's checks", () => {
    writeFileSync(
      join(project, "contract.mjs"),
      `import { contractTarget, jobProblems } from "minipod/contract";
const target = await contractTarget({ config: { endpoints: [{ id: "echo", handler: "echo" }] } });
const { status, body } = await target.call("POST", "/" + target.endpoint("echo") + "/runsync", { input: { n: 1 } });
console.log(JSON.stringify({ status, output: body.output, problems: jobProblems(body, "COMPLETED"), remote: target.remote }));
await target.close();
`,
    );
    const r = run(process.execPath, ["contract.mjs"], project);
    expect(JSON.parse(r.stdout)).toEqual({ status: 200, output: { n: 1 }, problems: [], remote: false });
  }, 60_000);

  it("type-checks TypeScript against the package's types: createEmulator, EmulatorConfig, Handler and the handler of docs/handlers.md", async () => {
    writeFileSync(
      join(project, "try.ts"),
      `import { createEmulator, type Emulator, type EmulatorConfig, type Handler, type JobView } from "minipod";

const greet: Handler<{ name: string }> = (input) => ({ greeting: "hello " + input.name });
const config: EmulatorConfig = {
  endpoints: [
    { id: "up", handler: async (input, ctx) => { await ctx.sleep(10); return input.text.toUpperCase(); } },
    { id: "gen", handler: async function* (input) { yield input.prompt; } },
    { id: "greet", handler: greet },
    { id: "echo", handler: "echo", workersMin: 1 },
  ],
};
export async function start(): Promise<Emulator> {
  const emu = await createEmulator({ clock: "manual", config });
  const port: number = emu.port;
  // @ts-expect-error the port is a number: the types are the package's, not any
  const wrong: string = emu.port;
  const job: JobView = await emu.waitForJob("up", "id", "COMPLETED");
  void [port, wrong, job];
  return emu;
}
// @ts-expect-error an unknown config key
export const bad: EmulatorConfig = { endpoints: [], nope: 1 };
`,
    );
    const [readmeHandler] = blocksOf("docs/handlers.md", "Handlers", "ts");
    writeFileSync(join(project, "handler.ts"), readmeHandler!.text);
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        // The declarations of the package and of what they import are checked (skipLibCheck:
        // false), TypeScript's own lib files not (skipDefaultLibCheck: they say nothing of it).
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, types: ["node"], skipLibCheck: false, skipDefaultLibCheck: true },
        files: ["try.ts", "handler.ts"],
      }),
    );
    const r = await typeCheck(project);
    expect(r.output).toBe("");
    expect(r.signal, `tsc was stopped at its bound of ${TYPE_CHECK_CPU_S} s of CPU`).toBe(null);
    expect(r.status).toBe(0);
  }, TYPE_CHECK_MS);

  it("runs vitest with minipod/vitest as docs/testing.md shows it: an emulator per worker, its URL injected", async () => {
    const vitest = JSON.parse(readFileSync(require.resolve("vitest/package.json"), "utf8")) as { version: string };
    run("npm", ["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", `vitest@${vitest.version}`], project);
    const [config, test, poller, pollerTest] = blocksOf("docs/testing.md", "With vitest", "ts");
    const suite = join(project, "suite");
    mkdirSync(suite);
    writeFileSync(join(suite, "vitest.config.ts"), config!.text);
    writeFileSync(join(suite, "echo.test.ts"), test!.text);
    // A client's own sleeps (its subsection): the client and its test, on minipodClock.
    writeFileSync(join(suite, "poller.ts"), poller!.text);
    writeFileSync(join(suite, "poller.test.ts"), pollerTest!.text);
    // Beside it, a file that runs at the same time on the other worker: each has its own emulator.
    writeFileSync(
      join(suite, "workers.test.ts"),
      `import { expect, inject, it } from "vitest";
import { minipodUrl } from "minipod/vitest";

it("has an emulator of its own among one per worker", async () => {
  const urls: string[] = inject("minipodUrls");
  expect(new Set(urls).size).toBe(2);
  expect(urls).toContain(minipodUrl());
  expect((await fetch(\`\${minipodUrl()}/_emulator/clock\`)).status).toBe(200);
});
`,
      );
      const r = spawnSync(process.execPath, [join(project, "node_modules", "vitest", "vitest.mjs"), "run", "--maxWorkers", "2"], { cwd: suite, env: cleanEnv(), encoding: "utf8", timeout: STEP_MS });
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      // The colours of vitest's report (escape sequences) aside.
      // eslint-disable-next-line no-control-regex
      expect(r.stdout.replace(/\x1b\[[0-9;]*m/g, "")).toMatch(/Tests\s+3 passed/);
      writeFileSync(
        join(suite, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, types: ["node"], skipLibCheck: true },
          files: ["vitest.config.ts", "echo.test.ts", "workers.test.ts", "poller.ts", "poller.test.ts"],
        }),
      );
      const types = await typeCheck(suite);
      expect(types.output).toBe("");
      expect(types.status).toBe(0);
    },
    2 * STEP_MS + TYPE_CHECK_MS,
  );
});
