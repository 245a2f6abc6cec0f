import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pythonPackageAvailable, run } from "../support/python-package.js";
import { PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";
import { blocksOf } from "../support/readme.js";

/**
 * The wheel `npm run build:wheel` writes (python/dist/minipod-*.whl), as a user installs it: into a
 * fresh venv in an empty folder with `pip install --no-index`, nothing else of minipod's on any
 * path (no clone recorded, no MINIPOD_CLI, no node_modules), then its `minipod` command, a worker,
 * and the pytest fixture, all running the CLI the wheel carries on the Node of PATH.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const available = pythonPackageAvailable();
/** Node's folder first on PATH, then the system's: the user's PATH. */
const PATH = `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;

let project = "";
let venv = "";
let wheel = "";
const minipod = () => join(venv, "bin", "minipod");
/** A clean environment: no PYTHONPATH, no MINIPOD_* variable. */
const env = (extra: Record<string, string> = {}): Record<string, string> => ({ PATH, HOME: project, PYTHONDONTWRITEBYTECODE: "1", ...extra });

beforeAll(async () => {
  if (!available) return;
  const built = spawnSync(process.execPath, [join(ROOT, "scripts/build-wheel.mjs")], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
  expect(built.status, built.stderr).toBe(0);
  const dist = join(ROOT, "python", "dist");
  wheel = join(dist, readdirSync(dist).find((f) => /^minipod-.*-py3-none-linux_x86_64\.whl$/.test(f))!);
  project = mkdtempSync(join(tmpdir(), "minipod-wheel-user-"));
  venv = join(project, ".venv");
  // Debian's packages are seen (pytest, and what the service's library imports); minipod is not among them.
  const made = await run(PYTHON, ["-m", "venv", "--system-site-packages", "--without-pip", venv], { cwd: project, env: env() });
  expect(made.code, made.output).toBe(0);
  const installed = await run(PYTHON, ["-m", "pip", "--python", join(venv, "bin", "python"), "install", "--quiet", "--no-index", wheel], { cwd: project, env: env() });
  expect(installed.code, installed.output).toBe(0);
}, 240_000);

describe.skipIf(!available)("the wheel, installed in an empty folder", { timeout: 120_000 }, () => {
  it("is one platform wheel carrying the CLI, the demo config and the SQLite binding for this Node, imported from the venv", async () => {
    expect(statSync(wheel).size).toBeLessThan(8_000_000);
    const where = await run(join(venv, "bin", "python"), ["-c", "import minipod, minipod._launch as l; print(minipod.__file__); print(l.BUNDLED)"], { cwd: project, env: env() });
    expect(where.code, where.output).toBe(0);
    expect(where.output).toContain(join(venv, "lib"));
    const help = await run(minipod(), ["--help"], { cwd: project, env: env() });
    expect(help.code, help.output).toBe(0);
    expect(help.output).toMatch(/^Usage: minipod \[options\]/);
    const version = await run(minipod(), ["--version"], { cwd: project, env: env() });
    expect(version.output.trim()).toBe((await import("../../package.json", { with: { type: "json" } })).default.version);
    for (const command of ["worker", "hub-test"]) {
      const usage = await run(minipod(), [command, "--help"], { cwd: project, env: env() });
      expect(usage.code, usage.output).toBe(0);
      expect(usage.output).toMatch(new RegExp(`^Usage: minipod ${command} `));
    }
  });

  it("serves: minipod on port 0, the demo endpoints (the compiled TypeScript one too), /docs; and stops on SIGTERM", async () => {
    const cli = await startMinipod(["--port", "0", "--clock", "manual"]);
    try {
      const runsync = async (endpoint: string, input: unknown) =>
        (await (await fetch(`${cli.url}/v2/${endpoint}/runsync`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input }), signal: AbortSignal.timeout(30_000) })).json()) as Record<string, unknown>;
      expect(await runsync("echo", { hello: "wheel" })).toMatchObject({ status: "COMPLETED", output: { hello: "wheel" } });
      expect(await runsync("text-gen", { prompt: "hi" })).toMatchObject({ status: "COMPLETED" });
      expect((await fetch(`${cli.url}/docs`)).status).toBe(200);
      expect((await fetch(`${cli.url}/docs/assets/swagger-ui.css`)).status).toBe(200);
      expect((await fetch(`${cli.url}/docs/graphql`)).status).toBe(200);
      for (const file of ["graphiql.min.js", "react-dom.production.min.js"]) expect((await fetch(`${cli.url}/docs/graphql/assets/${file}`)).status).toBe(200);
    } finally {
      cli.proc.kill("SIGTERM");
      expect(await cli.exited).toBe(0);
    }
  });

  it("says what to install when Node is missing, too old, or of another ABI than the binding's", async () => {
    const missing = await run(minipod(), ["--help"], { cwd: project, env: env({ PATH: "/nonexistent" }) });
    expect(missing.code).toBe(2);
    expect(missing.output).toMatch(/minipod: minipod runs on Node\.js 20 or later, and no `node` is on PATH\. Install Node\.js \(https:\/\/nodejs\.org/);
    const fake = (version: string, abi: string) => {
      const bin = mkdtempSync(join(tmpdir(), "minipod-fake-node-"));
      writeFileSync(join(bin, "node"), `#!/bin/sh\nif [ "$1" = "--version" ]; then echo ${version}; else echo "${abi} ${version} linux-x64"; fi\n`);
      chmodSync(join(bin, "node"), 0o755);
      return `${bin}:/usr/bin:/bin`;
    };
    const old = await run(minipod(), ["--help"], { cwd: project, env: env({ PATH: fake("v18.19.0", "108") }) });
    expect(old.code).toBe(2);
    expect(old.output).toMatch(/Node\.js 20 or later, and .*node is v18\.19\.0\. Install Node\.js/);
    const other = await run(minipod(), ["--help"], { cwd: project, env: env({ PATH: fake("v30.1.0", "999") }) });
    expect(other.code).toBe(2);
    const major = process.versions.node.split(".")[0];
    expect(other.output).toContain(`built for Node.js ${major} (ABI ${process.versions.modules}) on linux-x64`);
    expect(other.output).toMatch(/is Node\.js v30\.1\.0 \(ABI 999\) on linux-x64: install Node\.js \d+ /);
    // It carries no tsx: a TypeScript handler module in a config is refused, saying what to do.
    const dir = mkdtempSync(join(tmpdir(), "minipod-wheel-ts-"));
    writeFileSync(join(dir, "h.ts"), "export default async function (input: unknown) { return input; }\n");
    writeFileSync(join(dir, "emulator.config.json"), JSON.stringify({ endpoints: [{ id: "t", handler: "./h.ts" }] }));
    const ts = await run(minipod(), ["--port", "0"], { cwd: dir, env: env() });
    expect(ts.code).toBe(2);
    expect(ts.output).toContain("cannot load ./h.ts: a TypeScript handler module is loaded through tsx, which this copy of minipod does not carry");
  });

  it.skipIf(!pythonAvailable())("runs the README's From Python as written: its commands name the wheel built, its test passes in an empty project", async () => {
    const name = basename(wheel);
    const [commands] = blocksOf("README.md", "From Python", "sh");
    const lines = commands!.text.split("\n").map((l) => l.replace(/\s+#.*$/, ""));
    expect(lines).toEqual([`pip install ${name} runpod pytest`, "pytest"]);
    const [build, user] = blocksOf("docs/python.md", "Install", "sh");
    expect(build!.text).toContain(`npm ci && npm run build:wheel     # writes python/dist/${name}`);
    expect(user!.text).toContain(`pip install ${name} runpod pytest`);
    const [config] = blocksOf("README.md", "From Python", "json");
    const test = blocksOf("README.md", "From Python", "python").find((b) => b.text.includes("def test_"));
    const dir = mkdtempSync(join(tmpdir(), "minipod-wheel-readme-"));
    writeFileSync(join(dir, "emulator.config.json"), config!.text);
    writeFileSync(join(dir, "test_greeting.py"), test!.text);
    // The service's library is the user's (pip install runpod); here it comes from PYTHONPATH.
    const pytest = await run(join(venv, "bin", "python"), ["-m", "pytest", "-q", "-p", "no:cacheprovider"], { cwd: dir, env: env({ PYTHONPATH: pythonEnv().PYTHONPATH! }), wallMs: 120_000 });
    expect(pytest.code, pytest.output).toBe(0);
    expect(pytest.output).toMatch(/1 passed/);
  });

  it.skipIf(!pythonAvailable())("runs minipod worker on a handler, and the pytest fixture with a kept worker", async () => {
    // The service's library is the user's (pip install runpod); here it comes from PYTHONPATH.
    const runpodPath = pythonEnv().PYTHONPATH!;
    const dir = join(project, "app");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "emulator.config.json"), JSON.stringify({ endpoints: [{ id: "gpu-box", handler: "external" }], externalWorkers: { pingIntervalMs: 1000 } }));
    writeFileSync(join(dir, "handler.py"), `import runpod\n\ndef handler(job):\n    return {"greeting": f"hello, {job['input']['name']}"}\n\nrunpod.serverless.start({"handler": handler})\n`);
    const cli = await startMinipod([], dir);
    const python = join(venv, "bin", "python");
    const worker = spawn(minipod(), ["worker", "--url", cli.url, "--", python, "handler.py"], { cwd: dir, env: env({ PYTHONPATH: runpodPath }), stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    worker.stdout.on("data", (d: Buffer) => (out += d.toString()));
    worker.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const workerExited = new Promise<number | null>((resolve) => worker.once("exit", resolve));
    try {
      const res = await fetch(`${cli.url}/v2/gpu-box/runsync?wait=60000`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input: { name: "wheel" } }), signal: AbortSignal.timeout(60_000) });
      expect(await res.json(), out).toMatchObject({ status: "COMPLETED", output: { greeting: "hello, wheel" } });
    } finally {
      worker.kill("SIGTERM");
      await workerExited;
      cli.proc.kill("SIGTERM");
      await cli.exited;
    }

    writeFileSync(join(dir, "handlers.py"), `def greet(job):\n    return {"greeting": f"hello, {job['input']['name']}"}\n`);
    writeFileSync(
      join(dir, "test_app.py"),
      `import runpod\n\n\ndef test_one(minipod):\n    minipod.worker("handlers:greet", endpoint="gpu-box", keep=True)\n    assert runpod.Endpoint("gpu-box").run_sync({"name": "one"}, timeout=60) == {"greeting": "hello, one"}\n\n\ndef test_two(minipod):\n    minipod.worker("handlers:greet", endpoint="gpu-box", keep=True)\n    assert runpod.Endpoint("gpu-box").run_sync({"name": "two"}, timeout=60) == {"greeting": "hello, two"}\n`,
    );
    const pytest = await run(join(venv, "bin", "python"), ["-m", "pytest", "-q", "-p", "no:cacheprovider"], { cwd: dir, env: env({ PYTHONPATH: `${dir}:${runpodPath}` }), wallMs: 120_000 });
    expect(pytest.code, pytest.output).toBe(0);
    expect(pytest.output).toMatch(/2 passed/);
  });
});

afterAll(() => {
  for (const p of started) if (p.exitCode === null) p.kill("SIGKILL");
});

const started: ChildProcess[] = [];

/** The wheel's `minipod` with `args`, in `cwd` (the empty project): its URL once it listens. */
async function startMinipod(args: string[], cwd = project): Promise<{ url: string; proc: ChildProcess; exited: Promise<number | null> }> {
  const proc = spawn(minipod(), args, { cwd, env: env(), stdio: ["ignore", "pipe", "pipe"] });
  started.push(proc);
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`minipod did not start within 15 s:\n${out}`)), 15_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]!);
    };
    proc.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`minipod exited with ${code} before listening:\n${out}`));
    });
  });
  return { url, proc, exited };
}
