import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { forStarts, startCli, type RunningCli } from "../support/cli.js";
import { HANDLER, PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";

/**
 * `minipod worker -- python3 handler.py`, the real CLI on both sides: a minipod started with the
 * CLI, and the launcher running the service's worker runtime against it.
 */
const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));
const available = pythonAvailable();

interface Launcher {
  proc: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
  /** Resolves when the output has matched `re` (bounded). */
  waitFor(re: RegExp, ms?: number): Promise<RegExpExecArray>;
}

function launch(args: string[], env: Record<string, string> = {}): Launcher {
  const proc = spawn(process.execPath, [BIN, "worker", ...args], { env: { ...pythonEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const listeners = new Set<() => void>();
  const on = (d: Buffer) => {
    out += d.toString();
    for (const l of [...listeners]) l();
  };
  proc.stdout!.on("data", on);
  proc.stderr!.on("data", on);
  const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
  const waitFor = (re: RegExp, ms = 20_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = re.exec(out);
        if (!m) return;
        listeners.delete(check);
        clearTimeout(timer);
        resolve(m);
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`no ${re} within ${ms} ms:\n${out}`));
      }, ms);
      listeners.add(check);
      check();
    });
  return { proc, out: () => out, exited, waitFor };
}

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

let cli: RunningCli | undefined;
let launcher: Launcher | undefined;
afterEach(async () => {
  if (launcher && launcher.proc.exitCode === null) launcher.proc.kill("SIGKILL");
  await cli?.stop("SIGKILL");
  cli = launcher = undefined;
});

/** A CLI minipod; `keys` turns authentication on (`worker-only` and `reader-key` keys). */
async function startMinipod(keys: string[] = []): Promise<RunningCli> {
  const cfg = join(mkdtempSync(join(tmpdir(), "minipod-worker-cli-")), "config.json");
  const auth = keys.length ? { auth: { keys: [{ key: "worker-only", scopes: ["worker"] }, { key: "reader-key", scopes: ["queue:read"] }] } } : {};
  writeFileSync(cfg, JSON.stringify({ endpoints: [{ id: "ext", handler: "external" }, { id: "sim", handler: "echo" }], externalWorkers: { pingIntervalMs: 1000 }, ...auth }));
  return startCli(["--config", cfg, "--log-level", "warn"]);
}

describe.skipIf(!available)("minipod worker -- <command>", { timeout: 60_000 }, () => {
  it("runs workers for the only external endpoint, prefixes their output, and stops them with minipod", async () => {
    cli = await startMinipod();
    launcher = launch(["--url", cli.url, "--worker-id", "w-cli", "--workers", "2", "--", PYTHON, HANDLER]);
    const pids = [Number((await launcher.waitFor(/\[w-cli-1\] minipod: started: .* \(pid (\d+)\)/))[1]), Number((await launcher.waitFor(/\[w-cli-2\] minipod: started: .* \(pid (\d+)\)/))[1])];
    await launcher.waitFor(/\[w-cli-1\] --- Starting Serverless Worker/);
    await launcher.waitFor(/\[w-cli-2\] --- Starting Serverless Worker/);
    // The line docs/workers.md shows, as the library prints it.
    const shown = /\] (--- Starting Serverless Worker .*---)/.exec(readFileSync(new URL("../../docs/workers.md", import.meta.url), "utf8"))![1]!;
    expect(launcher.out()).toContain(`[w-cli-1] ${shown}`);

    const run = await fetch(`${cli.url}/v2/ext/runsync`, {
      method: "POST",
      headers: { authorization: "k" },
      body: JSON.stringify({ input: { do: "echo", value: "via the CLI" } }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(await run.json()).toMatchObject({ status: "COMPLETED", output: { echo: "via the CLI" }, workerId: expect.stringMatching(/^w-cli-[12]$/) });
    // Each worker is listed from its first request, which follows its start-up line by a moment.
    const ids = async () => ((await (await fetch(`${cli!.url}/_emulator/workers`)).json()) as { workers: Array<{ id: string }> }).workers.map((w) => w.id).sort();
    await expect.poll(ids, { timeout: 10_000 }).toEqual(["w-cli-1", "w-cli-2"]);

    expect(await cli.stop("SIGTERM")).toBe(0);
    expect(await launcher.exited).toBe(0);
    expect(launcher.out()).toMatch(/minipod at http:\/\/127\.0\.0\.1:\d+ stopped: stopping the worker/);
    for (const pid of pids) expect(gone(pid)).toBe(true);
  });

  it("stops its worker on Ctrl-C, and minipod answers its held polls at once", async () => {
    cli = await startMinipod();
    launcher = launch(["--url", cli.url, "--endpoint", "ext", "--worker-id", "w-int", "--", PYTHON, HANDLER]);
    const pid = Number((await launcher.waitFor(/\[w-int\] minipod: started: .* \(pid (\d+)\)/))[1]);
    // Up when its polls for work are held open (however long the start takes: stopped before,
    // the library would have no held poll to be answered).
    const polling = async () => ((await (await fetch(`${cli!.url}/_emulator/workers`)).json()) as { workers: Array<{ openPolls: number }> }).workers[0]?.openPolls ?? 0;
    while ((await polling()) < 2) await new Promise((r) => setTimeout(r, 50));
    launcher.proc.kill("SIGINT");
    expect(await launcher.exited).toBe(0);
    // The library exits only once its held job-take and job-stop are answered (the hold is 20 s,
    // the grace before SIGKILL 10 s): they were answered at once, so it needed no SIGKILL.
    expect(launcher.out()).toMatch(/\[w-int\] minipod: exited with code 0/);
    expect(launcher.out()).not.toMatch(/SIGKILL/);
    expect(gone(pid)).toBe(true);
    const listed = (await (await fetch(`${cli.url}/_emulator/workers`)).json()) as { workers: Array<{ id: string; state: string }> };
    expect(listed.workers).toEqual([expect.objectContaining({ id: "w-int", state: "stopped", reason: "stopped by minipod" })]);
  });

  it("tells minipod at once when its worker process dies while the launcher lives: lost, out of /health", async () => {
    cli = await startMinipod();
    launcher = launch(["--url", cli.url, "--endpoint", "ext", "--worker-id", "w-dead", "--", PYTHON, HANDLER]);
    const pid = Number((await launcher.waitFor(/\[w-dead\] minipod: started: .* \(pid (\d+)\)/))[1]);
    const health = async () => ((await (await fetch(`${cli!.url}/v2/ext/health`, { headers: { authorization: "k" } })).json()) as { workers: { idle: number } }).workers;
    while ((await health()).idle < 1) await new Promise((r) => setTimeout(r, 50));
    process.kill(-pid, "SIGKILL");
    await launcher.waitFor(/\[w-dead\] minipod: exited on SIGKILL/);
    // Heartbeats would take 3 s (3 periods of 1 s) to tell; the launcher's word comes first, and
    // the reason says whose word it was (the launcher prints its line before it tells minipod).
    let workers: Array<{ id: string; state: string; reason?: string }> = [];
    for (;;) {
      workers = ((await (await fetch(`${cli.url}/_emulator/workers`)).json()) as { workers: typeof workers }).workers;
      if (workers[0]?.state === "lost") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(workers).toEqual([expect.objectContaining({ id: "w-dead", state: "lost", reason: "its process was killed by SIGKILL" })]);
    expect((await health()).idle).toBe(0);
  });

  it("outlives a restart of minipod --watch on a config edit: it waits for it, then goes on taking jobs", async () => {
    const cfg = join(mkdtempSync(join(tmpdir(), "minipod-worker-cli-")), "emulator.config.json");
    const config = (extra: object[] = []) => JSON.stringify({ endpoints: [{ id: "ext", handler: "external" }, ...extra], externalWorkers: { pingIntervalMs: 1000 } });
    writeFileSync(cfg, config());
    cli = await startCli(["--watch", "--config", cfg, "--log-level", "warn"]);
    launcher = launch(["--url", cli.url, "--worker-id", "w-keep", "--", PYTHON, HANDLER]);
    const pid = Number((await launcher.waitFor(/\[w-keep\] minipod: started: .* \(pid (\d+)\)/))[1]);
    const runsync = async (value: string) => {
      const res = await fetch(`${cli!.url}/v2/ext/runsync`, { method: "POST", headers: { authorization: "k" }, body: JSON.stringify({ input: { do: "echo", value } }), signal: AbortSignal.timeout(30_000) });
      return (await res.json()) as { status: string; output?: unknown };
    };
    expect(await runsync("before")).toMatchObject({ status: "COMPLETED", output: { echo: "before" } });

    writeFileSync(cfg, config([{ id: "added", handler: "echo" }]));
    await cli.stderrContains("config reloaded, 2 endpoint(s)");
    await launcher.waitFor(/minipod at http:\/\/127\.0\.0\.1:\d+ is back: the worker\(s\) go on/);
    // The same process, still running, takes the next job from the restarted minipod.
    expect(await runsync("after")).toMatchObject({ status: "COMPLETED", output: { echo: "after" }, workerId: "w-keep" });
    expect(gone(pid)).toBe(false);
    expect(launcher.proc.exitCode).toBe(null);
    expect(launcher.out()).toMatch(/is restarting: the worker\(s\) wait for it/);
    expect(launcher.out()).not.toMatch(/stopping the worker/);

    // A real stop still stops it.
    expect(await cli.stop("SIGTERM")).toBe(0);
    expect(await launcher.exited).toBe(0);
    expect(gone(pid)).toBe(true);
  }, forStarts(2, 40_000));

  it("says what is wrong: no command, an endpoint that is not external, a refused key, minipod not running", async () => {
    cli = await startMinipod(["worker-only"]);
    const none = launch(["--url", cli.url]);
    expect(await none.exited).toBe(2);
    expect(none.out()).toMatch(/no command to run: put it after --/);

    const misspelt = launch(["--url", cli.url, "--endpont", "ext", "--", PYTHON, HANDLER]);
    expect(await misspelt.exited).toBe(2);
    expect(misspelt.out()).toMatch(/minipod: unknown flag --endpont: did you mean --endpoint\?\n\nUsage: minipod worker/);

    const simulated = launch(["--url", cli.url, "--endpoint", "sim", "--", PYTHON, HANDLER]);
    expect(await simulated.exited).toBe(2);
    expect(simulated.out()).toMatch(/endpoint "sim" is not served by worker processes.*"handler": "external": ext/);

    const refused = launch(["--url", cli.url, "--key", "wrong-key", "--", PYTHON, HANDLER]);
    expect(await refused.exited).toBe(2);
    expect(refused.out()).toMatch(/minipod refused the worker's key on endpoint ext \(401 .*\): give a key minipod accepts, with the worker scope/);
    const reader = launch(["--url", cli.url, "--key", "reader-key", "--", PYTHON, HANDLER]);
    expect(await reader.exited).toBe(2);
    expect(reader.out()).toMatch(/\(403 /);

    const url = cli.url;
    await cli.stop("SIGTERM");
    const away = launch(["--url", url, "--", PYTHON, HANDLER]);
    expect(await away.exited).toBe(2);
    expect(away.out()).toMatch(/cannot reach minipod at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED; is it running\?/);
  }, forStarts(7));
});
