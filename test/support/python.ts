import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Emulator, JobView, WorkerProcess } from "../../src/index.js";
import { workerEnv } from "../../src/launch/worker-process.js";
import { via } from "./recorder.js";
import { CLIENTS, STUBS } from "./shared.js";

/** Debian's python3, where `.ci/run` installs the packages the service's library needs. */
export const PYTHON = "/usr/bin/python3";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/**
 * Where the service's Python library is found, as on a user's machine: installed, or on the
 * PYTHONPATH given to the tests, or in `$MINIPOD_CLIENTS/runpod-python` (the sources as published);
 * and the stand-ins for what Debian does not package (../shared/clients/python/stubs).
 */
export const PYTHONPATH = [process.env.PYTHONPATH, userSite(), CLIENTS && join(CLIENTS, "runpod-python"), existsSync(STUBS) ? STUBS : undefined].filter(Boolean).join(":");
export const FIXTURES = join(ROOT, "test/fixtures/python");
export const HANDLER = join(FIXTURES, "handler.py");

/** The user's own site-packages (`pip install --user runpod`): the tests give Python a fresh HOME, which would hide it. */
function userSite(): string | undefined {
  const r = spawnSync("/usr/bin/python3", ["-c", "import site; print(site.getusersitepackages())"], { encoding: "utf8", timeout: 30_000 });
  const dir = r.status === 0 ? r.stdout.trim() : "";
  return dir && existsSync(dir) ? dir : undefined;
}

/** What the service's library needs of Debian (`.ci/run` installs them: a machine can always have them). */
const DEBIAN_MODULES = "aiohttp, requests, backoff, fastapi, psutil";

let debianChecked = false;
let importable: { ok: true } | { ok: false; why: string } | undefined;

/**
 * Whether Debian's python3 has what the library needs: when it does not, that is an error in CI
 * (`CI=true`; .ci/run installs those packages), elsewhere a skip with the reason.
 */
function debianPython(): string | undefined {
  const r = spawnSync(PYTHON, ["-c", `import ${DEBIAN_MODULES}`], { encoding: "utf8", timeout: 30_000 });
  if (r.status === 0) return undefined;
  return r.error ? `${PYTHON}: ${r.error.message}` : (r.stderr || r.stdout).trim().split("\n").slice(-1)[0];
}

/**
 * Whether the service's Python library (`runpod` 1.12.0) can be imported by Debian's python3 the
 * way a user's machine has it. Where it cannot, the calling test file is skipped with one line
 * saying what is missing and how to get it, in CI too (CI has no Python registry); a missing
 * Debian package (which can always be had) is an error in CI.
 */
export function pythonAvailable(): boolean {
  const why = runpodMissing();
  if (why === undefined) return true;
  // Recording (npm run contracts:record) needs the clients: a skip would leave stale recordings.
  if (process.env.MINIPOD_RECORD === "1") throw new Error(`cannot record the real clients' exchanges: ${why}`);
  console.warn(`skipped ${callerFile()}: ${why}`);
  return false;
}

/** Why `runpod` cannot be imported (undefined when it can); throws in CI when a Debian package is missing. */
export function runpodMissing(): string | undefined {
  if (!debianChecked) {
    debianChecked = true;
    const why = debianPython();
    if (why !== undefined) {
      const line = `Debian's python3 cannot import ${DEBIAN_MODULES} (${why}); apt-get install the packages .ci/run lists`;
      if (process.env.CI === "true") throw new Error(line);
      importable = { ok: false, why: line };
    }
  }
  if (!importable) {
    const r = spawnSync(PYTHON, ["-c", "import runpod, runpod.serverless"], { env: pythonEnv(), encoding: "utf8", timeout: 30_000 });
    importable = r.status === 0 ? { ok: true } : { ok: false, why: `the service's Python library cannot be imported (${(r.stderr || r.stdout || String(r.error)).trim().split("\n").slice(-1)[0]}): pip install runpod==1.12.0, or set MINIPOD_CLIENTS to a folder holding runpod-python (docs/development.md)` };
  }
  return importable.ok ? undefined : importable.why;
}

/** The test file that asked (for the skip line). */
function callerFile(): string {
  const stack = new Error().stack ?? "";
  const m = /(test\/[\w/.-]+\.test\.ts)/.exec(stack);
  return m ? m[1]! : "the Python real-client tests";
}

let home: string | undefined;

/** The environment of a Python process: the library on its path, a fresh HOME (no ~/.runpod credentials). */
export function pythonEnv(extra: Record<string, string> = {}): Record<string, string> {
  home ??= mkdtempSync(join(tmpdir(), "minipod-python-home-"));
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", PYTHONPATH, HOME: home, PYTHONUNBUFFERED: "1", PYTHONDONTWRITEBYTECODE: "1", RUNPOD_LOG_LEVEL: "INFO", ...extra };
}

/** A worker process of the test handler, started by the emulator, with its output kept. */
export interface PyWorker {
  proc: WorkerProcess;
  lines: string[];
  /** Resolves with the first line (so far or to come) matching `re`; rejects after `ms` wall ms. */
  waitForLine(re: RegExp, ms?: number): Promise<string>;
}

export function startPyWorker(emu: Emulator, o: { endpoint: string; workerId?: string; env?: Record<string, string>; restart?: boolean; batch?: boolean }): PyWorker {
  const lines: string[] = [];
  // Through the recorder while one relays to this minipod: the worker's URLs name it instead.
  const relay = via(emu.url);
  if (relay !== emu.url) {
    o = { ...o, workerId: o.workerId ?? `${o.endpoint}-worker` };
    const urls = workerEnv({ url: relay, endpoint: o.endpoint, workerId: o.workerId!, key: "minipod-worker", pingIntervalMs: 0, batch: o.batch });
    const keys = ["RUNPOD_WEBHOOK_GET_JOB", "RUNPOD_WEBHOOK_POST_OUTPUT", "RUNPOD_WEBHOOK_POST_STREAM", "RUNPOD_WEBHOOK_PING", "RUNPOD_ENDPOINT_BASE_URL"];
    o.env = { ...Object.fromEntries(keys.map((k) => [k, urls[k]!])), ...o.env };
  }
  const waiters = new Set<() => void>();
  const proc = emu.startWorker({
    endpoint: o.endpoint,
    command: [PYTHON, HANDLER],
    ...(o.workerId ? { workerId: o.workerId } : {}),
    ...(o.restart ? { restart: true } : {}),
    ...(o.batch ? { batch: true } : {}),
    env: pythonEnv(o.env),
    output: (line) => {
      lines.push(line);
      for (const w of [...waiters]) w();
    },
  });
  const waitForLine = (re: RegExp, ms = 20_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const hit = lines.find((l) => re.test(l));
        if (!hit) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no line matching ${re} within ${ms} ms; the worker wrote:\n${lines.slice(-40).join("\n")}`));
      }, ms);
      if (!check()) waiters.add(check);
    });
  return { proc, lines, waitForLine };
}

const AUTH = { authorization: "test-key" };

/** A queue-API client for the tests' own checks (the clients under test are the Python ones). */
export function queue(emu: Emulator, endpoint: string) {
  const base = `${via(emu.url)}/v2/${endpoint}`;
  const json = async <T>(res: Response): Promise<T> => {
    if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    run: async (input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      (await json<{ id: string }>(await fetch(`${base}/run`, { method: "POST", headers: AUTH, body: JSON.stringify({ input, ...extra }) }))).id,
    status: async (id: string) => json<JobView>(await fetch(`${base}/status/${id}`, { headers: AUTH })),
    /** Held until the job is final (the manual clock does not end the hold); bounded in wall time. */
    final: async (id: string, wallMs = 30_000) => json<JobView>(await fetch(`${base}/status-sync/${id}?wait=300000`, { headers: AUTH, signal: AbortSignal.timeout(wallMs) })),
    stream: async (id: string) => json<{ status: string; stream: Array<{ output: unknown }> }>(await fetch(`${base}/stream/${id}?wait=1000`, { headers: AUTH })),
    cancel: async (id: string) => json<{ status: string }>(await fetch(`${base}/cancel/${id}`, { method: "POST", headers: AUTH })),
    health: async () => json<{ jobs: Record<string, number>; workers: Record<string, number> }>(await fetch(`${base}/health`, { headers: AUTH })),
  };
}

/** Polls `probe` (every 50 ms wall) until it returns something other than undefined; bounded. */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, ms = 20_000, what = "the condition"): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs test/fixtures/python/client.py (the service's client) with `calls`; its RESULT and ERROR lines by call. */
export async function runPyClient(
  calls: string[],
  env: { v2: string; endpoint: string; input?: unknown },
  wallMs = 60_000,
): Promise<{ results: Record<string, unknown>; errors: Record<string, string>; output: string }> {
  const child = spawn(PYTHON, [join(FIXTURES, "client.py"), ...calls], {
    env: pythonEnv({ MINIPOD_V2: env.v2, ENDPOINT: env.endpoint, INPUT: JSON.stringify(env.input ?? {}) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), wallMs);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearTimeout(timer);
  const results: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const line of output.split("\n")) {
    const r = /^RESULT (\S+) (.*)$/.exec(line);
    if (r) results[r[1]!] = JSON.parse(r[2]!);
    const e = /^ERROR (\S+) (.*)$/.exec(line);
    if (e) errors[e[1]!] = e[2]!;
  }
  if (code !== 0) throw new Error(`client.py exited with ${code}:\n${output}`);
  return { results, errors, output };
}
