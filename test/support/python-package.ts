import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PYTHON, pythonEnv } from "./python.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Whether the Python package can be installed and tested here: Debian's python3 with pytest,
 * venv, pip and setuptools. With CI=true a missing piece is an error (they are Debian packages:
 * the suite cannot pass by skipping); elsewhere the tests are skipped with the reason. The
 * service's library is not needed: the suite's tests that use it skip themselves without it.
 */
export function pythonPackageAvailable(): boolean {
  const r = spawnSync(PYTHON, ["-c", "import setuptools, pytest, venv, pip, aiohttp, requests"], { encoding: "utf8", timeout: 30_000 });
  if (r.status === 0) return true;
  const why = (r.stderr || r.stdout || String(r.error)).trim().split("\n").slice(-1)[0];
  if (process.env.CI === "true") throw new Error(`the Python package's tests need python3-pytest, python3-venv, python3-pip and python3-setuptools (${why}); .ci/run installs them`);
  console.warn(`Python package tests skipped: ${why} (apt-get install python3-pytest python3-venv python3-pip python3-setuptools)`);
  return false;
}

/** Runs a command; resolves with its exit code and output (both streams), killed after `wallMs`. */
export function run(cmd: string, args: string[], o: { cwd?: string; env?: Record<string, string>; wallMs?: number } = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: o.cwd ?? ROOT, env: o.env ?? pythonEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), o.wallMs ?? 120_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * A venv (seeing Debian's packages) with the package installed from this clone as a user installs
 * it, `pip install ./python` (no build isolation: no Python registry is reachable); its python.
 */
export async function venvWithPackage(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "minipod-venv-"));
  // Without a pip of its own (seeding one takes seconds): Debian's pip installs into it.
  const made = await run(PYTHON, ["-m", "venv", "--system-site-packages", "--without-pip", dir]);
  if (made.code !== 0) throw new Error(`python3 -m venv failed:\n${made.output}`);
  const python = join(dir, "bin", "python");
  // pip builds in the clone's tree, and setuptools leaves its metadata there (python/src/minipod.egg-info),
  // through which a later `PYTHONPATH=src pytest -p minipod.pytest_plugin` would register the plugin twice.
  const metadata = join(ROOT, "python", "src", "minipod.egg-info");
  const hadMetadata = existsSync(metadata);
  const installed = await run(PYTHON, ["-m", "pip", "--python", python, "install", "--quiet", "--no-build-isolation", "--no-deps", "--no-index", "./python"]);
  if (!hadMetadata) rmSync(metadata, { recursive: true, force: true });
  if (installed.code !== 0) throw new Error(`pip install ./python failed:\n${installed.output}`);
  return python;
}
