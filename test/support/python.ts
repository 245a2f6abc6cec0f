import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Emulator, JobView, WorkerProcess } from "../../src/index.js";

/** Debian's python3, where `.ci/run` installs the packages the service's library needs. */
export const PYTHON = "/usr/bin/python3";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The service's Python library, unchanged, and the stand-ins for what Debian does not package. */
export const PYTHONPATH = [join(ROOT, "vendor/python/runpod-python"), join(ROOT, "vendor/python/stubs")].join(":");
export const FIXTURES = join(ROOT, "test/fixtures/python");
export const HANDLER = join(FIXTURES, "handler.py");

/**
 * Whether the library can be imported by Debian's python3. In CI (`CI=true`) it is an error when
 * it cannot, so the suite cannot pass by skipping; elsewhere the tests are skipped with the reason.
 */
export function pythonAvailable(): boolean {
  const r = spawnSync(PYTHON, ["-c", "import runpod, runpod.serverless, aiohttp, requests"], { env: pythonEnv(), encoding: "utf8", timeout: 30_000 });
  if (r.status === 0) return true;
  const why = r.error ? `${PYTHON}: ${r.error.message}` : (r.stderr || r.stdout).trim().split("\n").slice(-1)[0];
  if (process.env.CI === "true") throw new Error(`the service's Python library cannot be imported (${why}); .ci/run installs python3 and the Debian packages vendor/python/README.md lists`);
  console.warn(`Python worker and client tests skipped: the service's Python library cannot be imported (${why}); see vendor/python/README.md`);
  return false;
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
  const base = `${emu.url}/v2/${endpoint}`;
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
