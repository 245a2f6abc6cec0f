import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RECORDING } from "./recording.js";
import { CLIENTS } from "./shared.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** minipod's Python package, for a worker process that runs one of its runtimes. */
export const PYTHON_PACKAGE = join(ROOT, "python/src");

/** The folder of the service's Python clients (CLIENTS, from MINIPOD_CLIENTS), when it has the three. */
export function clientsFolder(): string | undefined {
  const dir = CLIENTS;
  return dir && ["runpod-python", "runpod-python-2", "runpod-flash/src"].every((d) => existsSync(join(dir, d))) ? dir : undefined;
}

let made: { python?: string; why?: string } | undefined;

/**
 * An interpreter in which runpod-flash and the SDK 2.x import (the venv of scripts/python-venv.sh):
 * MINIPOD_FLASH_VENV if set, else one made once under the temporary folder (about a minute) and
 * kept for the next runs. Undefined, with a line saying what is missing, when it cannot be had.
 */
export function flashPython(): string | undefined {
  if (made) return made.python;
  made = {};
  const clients = clientsFolder();
  if (!clients) made.why = "MINIPOD_CLIENTS does not name a folder with runpod-python, runpod-python-2 and runpod-flash/src";
  else {
    const venv = process.env.MINIPOD_FLASH_VENV ?? join(tmpdir(), "minipod-flash-venv");
    const python = join(venv, "bin", "python");
    const stamp = join(venv, ".minipod-ready");
    if (!process.env.MINIPOD_FLASH_VENV && !existsSync(stamp)) made.why = makeVenv(venv, clients, stamp);
    if (!made.why) {
      const r = spawnSync(python, ["-c", "import runpod_flash, cloudpickle"], { encoding: "utf8", timeout: 60_000, cwd: mkdtempSync(join(tmpdir(), "minipod-flash-check-")) });
      if (r.status === 0) made.python = python;
      else made.why = `${python} cannot import runpod_flash: ${(r.stderr || String(r.error)).trim().split("\n").slice(-1)[0]}`;
    }
  }
  if (made.why) {
    console.warn(`Flash tests skipped: ${made.why}`);
  }
  return made.python;
}

/**
 * Makes the venv once, for test files that run at the same time: the first takes the lock (a
 * folder) and builds; the others wait for its stamp. Returns why it could not, if so.
 */
function makeVenv(venv: string, clients: string, stamp: string): string | undefined {
  const lock = `${venv}.lock`;
  const waitMs = 300_000;
  try {
    mkdirSync(lock);
  } catch {
    const until = Date.now() + waitMs;
    while (!existsSync(stamp) && existsSync(lock) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    return existsSync(stamp) ? undefined : `the venv at ${venv} was not made by the test file that was making it (remove ${lock} if none is)`;
  }
  try {
    const r = spawnSync("bash", [join(ROOT, "scripts/python-venv.sh"), venv], { encoding: "utf8", timeout: waitMs, env: { ...process.env, MINIPOD_CLIENTS: clients } });
    if (r.status !== 0) return `scripts/python-venv.sh failed: ${(r.stderr || String(r.error)).trim().split("\n").slice(-1)[0]}`;
    writeFileSync(stamp, "");
    return undefined;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The environment that points runpod-flash (and the SDK 2.x) at a minipod by its URL variables. */
export function flashClientEnv(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: mkdtempSync(join(tmpdir(), "minipod-flash-home-")),
    PYTHONUNBUFFERED: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    RUNPOD_API_KEY: "any-key",
    RUNPOD_API_BASE_URL: url,
    RUNPOD_ENDPOINT_BASE_URL: `${url}/v2`,
    RUNPOD_REST_API_URL: `${url}/v1`,
    RUNPOD_HAPI_URL: url,
    RUNPOD_CONSOLE_URL: url,
    FLASH_IS_LIVE_PROVISIONING: "true",
    ...extra,
  };
}

/**
 * The interpreter to give minipod (MINIPOD_PYTHON) for the worker processes it starts, so that
 * they reach it through its recorder while one relays to it: a script that puts the recorder's URL
 * in place of minipod's in the RUNPOD_* variables minipod gives them, then runs `python`. The two
 * URLs are read, when a process starts, from `relay.file`, which `relay.to(from, to)` writes (the
 * URLs are known once minipod and its recorder listen, after the interpreter is named). Without
 * a recording, `python` itself.
 */
export function relayedPython(python: string): { python: string; to(from: string, to: string): void } {
  if (!RECORDING) return { python, to: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "minipod-relayed-python-"));
  const file = join(dir, "urls");
  const script = join(dir, "python");
  writeFileSync(file, "");
  writeFileSync(
    script,
    [
      "#!/usr/bin/env bash",
      `read -r from to < ${JSON.stringify(file)} || true`,
      'if [ -n "$from" ]; then for v in $(compgen -e | grep "^RUNPOD_"); do export "$v=${!v//"$from"/"$to"}"; done; fi',
      `exec ${JSON.stringify(python)} "$@"`,
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  return { python: script, to: (from, to) => writeFileSync(file, `${from} ${to}\n`) };
}

/** Runs `cmd` with `args` in `cwd` and `env`, killed past `killAfterMs`: its exit code and all it printed. */
export function runCommand(cmd: string, args: string[], cwd: string, env: Record<string, string>, killAfterMs = 150_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Runs the Flash interpreter with `args` in `cwd` and `env` (killed past 150 s): its exit code and all it printed. */
export function runFlashPython(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const python = flashPython();
  if (!python) throw new Error("no Flash interpreter: the test should have been skipped");
  return runCommand(python, args, cwd, env);
}
