import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { startCli, type RunningCli } from "../support/cli.js";
import { eventually, PYTHON, pythonAvailable, pythonEnv } from "../support/python.js";

const BIN = fileURLToPath(new URL("../../bin/minipod.js", import.meta.url));
const AUTH = { authorization: "k" };

async function submit(url: string, endpoint: string): Promise<string> {
  const res = await fetch(`${url}/v2/${endpoint}/run`, { method: "POST", headers: AUTH, body: JSON.stringify({ input: {} }) });
  return ((await res.json()) as { id: string }).id;
}
const status = async (url: string, endpoint: string, id: string) => (await (await fetch(`${url}/v2/${endpoint}/status/${id}`, { headers: AUTH })).json()) as { status: string; output?: unknown };

describe("minipod --watch", { timeout: 30_000 }, () => {
  let cli: RunningCli | undefined;
  afterEach(async () => {
    await cli?.stop();
    cli = undefined;
  });

  it("reloads an edited handler module for new jobs while a running job finishes on its old code, and reloads the config keeping the state", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minipod-watch-"));
    const handler = (v: number) => `export default async function (input, ctx) { await ctx.sleep(1000); return { v: ${v} }; }\n`;
    writeFileSync(join(dir, "handler.mjs"), handler(1));
    const config = (extra: object[] = []) => JSON.stringify({ clock: { mode: "manual" }, endpoints: [{ id: "h", handler: "./handler.mjs", workersMin: 1, workersMax: 2, coldStartMs: 0 }, ...extra] });
    writeFileSync(join(dir, "emulator.config.json"), config());
    cli = await startCli(["--watch", "--config", join(dir, "emulator.config.json")]);
    const running = cli;
    const a = await submit(running.url, "h");
    expect((await status(running.url, "h", a)).status).toBe("IN_PROGRESS");

    writeFileSync(join(dir, "handler.mjs"), handler(2));
    await eventually(() => (/handler\.mjs changed: handlers reloaded \(\.\/handler\.mjs\)/.test(running.stderr()) ? true : undefined), 10_000, "the reload");
    const b = await submit(running.url, "h");
    await running.advance(1000);
    expect(await status(running.url, "h", a)).toMatchObject({ status: "COMPLETED", output: { v: 1 } });
    expect(await status(running.url, "h", b)).toMatchObject({ status: "COMPLETED", output: { v: 2 } });

    // A broken config is refused, and the previous one still serves.
    writeFileSync(join(dir, "emulator.config.json"), "{ nope");
    await eventually(() => (/does not load; still serving the previous config/.test(running.stderr()) ? true : undefined), 10_000, "the refusal");
    // So is one that parses but would not start (a handler module that is not there).
    writeFileSync(join(dir, "emulator.config.json"), config([{ id: "ghost", handler: "./missing.mjs" }]));
    await eventually(
      () => (/still serving the previous config:\n[^]*endpoints\[1\]\.handler: cannot load \.\/missing\.mjs: no such file/.test(running.stderr()) ? true : undefined),
      10_000,
      "the second refusal",
    );
    expect((await status(running.url, "h", a)).status).toBe("COMPLETED");
    writeFileSync(join(dir, "emulator.config.json"), config([{ id: "added", handler: "echo" }]));
    await eventually(() => (/config reloaded, 2 endpoint\(s\) on /.test(running.stderr()) ? true : undefined), 10_000, "the config reload");
    const endpoints = (await (await fetch(`${running.url}/_emulator/endpoints`)).json()) as { endpoints: Array<{ id: string }> };
    expect(endpoints.endpoints.map((e) => e.id).sort()).toEqual(["added", "h"]);
    // Same port, same jobs.
    expect(await status(running.url, "h", a)).toMatchObject({ status: "COMPLETED", output: { v: 1 } });
  });
});

describe.skipIf(!pythonAvailable())("minipod worker --watch", { timeout: 60_000 }, () => {
  let emu: Emulator | undefined;
  afterEach(async () => {
    await emu?.close();
    emu = undefined;
  });

  it("restarts the worker when its handler is edited; the next job runs the new code", async () => {
    emu = await createEmulator({ config: { endpoints: [{ id: "py", handler: "external" }], externalWorkers: { pingIntervalMs: 1000 } } });
    const dir = mkdtempSync(join(tmpdir(), "minipod-wwatch-"));
    const handler = (v: string) => `import runpod\n\ndef handler(job):\n    return {"v": "${v}"}\n\nrunpod.serverless.start({"handler": handler})\n`;
    writeFileSync(join(dir, "handler.py"), handler("one"));
    const child = spawn(process.execPath, [BIN, "worker", "--url", emu.url, "--watch", "--", PYTHON, "-u", "handler.py"], {
      cwd: dir,
      env: { ...process.env, ...pythonEnv() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout.resume();
    const exited = new Promise((r) => child.once("exit", r));
    try {
      const runsync = async () => {
        const res = await fetch(`${emu!.url}/v2/py/runsync?wait=60000`, { method: "POST", headers: AUTH, body: JSON.stringify({ input: {} }), signal: AbortSignal.timeout(30_000) });
        return ((await res.json()) as { output?: unknown }).output;
      };
      expect(await runsync()).toEqual({ v: "one" });
      writeFileSync(join(dir, "handler.py"), handler("two"));
      await eventually(() => (/handler\.py changed: restarting the worker\(s\)/.test(err) ? true : undefined), 10_000, "the restart");
      expect(await runsync()).toEqual({ v: "two" });
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
  it("puts a job running during an edit back in the queue, where it runs on the new code", async () => {
    emu = await createEmulator({ clock: "real", config: { endpoints: [{ id: "py", handler: "external" }], externalWorkers: { pingIntervalMs: 1000 } } });
    const dir = mkdtempSync(join(tmpdir(), "minipod-wwatch-"));
    // The old code takes a minute of wall time; the new one answers at once.
    const handler = (v: string, seconds: number) => `import time\nimport runpod\n\ndef handler(job):\n    time.sleep(${seconds})\n    return {"v": "${v}"}\n\nrunpod.serverless.start({"handler": handler})\n`;
    writeFileSync(join(dir, "handler.py"), handler("one", 60));
    const child = spawn(process.execPath, [BIN, "worker", "--url", emu.url, "--watch", "--", PYTHON, "-u", "handler.py"], {
      cwd: dir,
      env: { ...process.env, ...pythonEnv() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout.resume();
    const exited = new Promise((r) => child.once("exit", r));
    try {
      const id = await submit(emu.url, "py");
      await eventually(async () => ((await status(emu!.url, "py", id)).status === "IN_PROGRESS" ? true : undefined), 20_000, "the job started");
      writeFileSync(join(dir, "handler.py"), handler("two", 0));
      // Not after the old code's minute (nor after a 10 s grace before SIGKILL): the old process is
      // killed at once, and the new one takes the job again.
      const done = await emu.waitForJob("py", id, "COMPLETED", 20_000);
      expect(done.output, err).toEqual({ v: "two" });
      expect(err).toMatch(/handler\.py changed: restarting the worker\(s\)/);
      expect(err).not.toMatch(/SIGTERM/);
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });

  it("ignores the files the worker writes beside its code (logs, databases, caches) and restarts once per edit of its source", async () => {
    emu = await createEmulator({ clock: "real", config: { endpoints: [{ id: "py", handler: "external" }], externalWorkers: { pingIntervalMs: 1000 } } });
    const dir = mkdtempSync(join(tmpdir(), "minipod-wwatch-"));
    const handler = (v: string) => `import runpod\n\ndef handler(job):\n    return {"v": "${v}"}\n\nrunpod.serverless.start({"handler": handler})\n`;
    writeFileSync(join(dir, "handler.py"), handler("one"));
    mkdirSync(join(dir, "__pycache__"));
    mkdirSync(join(dir, "logs"));
    const child = spawn(process.execPath, [BIN, "worker", "--url", emu.url, "--watch", "--", PYTHON, "-u", "handler.py"], {
      cwd: dir,
      env: { ...process.env, ...pythonEnv() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout.resume();
    const exited = new Promise((r) => child.once("exit", r));
    // What a worker and the tools around it write while it runs: every 50 ms, all along.
    let writes = 0;
    const writer = setInterval(() => {
      writes++;
      appendFileSync(join(dir, "worker.log"), `line ${writes}\n`);
      appendFileSync(join(dir, "mp.log"), `line ${writes}\n`);
      appendFileSync(join(dir, "logs", "run.txt"), `line ${writes}\n`);
      writeFileSync(join(dir, "jobs.sqlite"), `state ${writes}`);
      writeFileSync(join(dir, "__pycache__", "handler.cpython-311.pyc"), `${writes}`);
      writeFileSync(join(dir, "output.json"), JSON.stringify({ writes }));
    }, 50);
    const restarts = () => err.match(/changed: restarting the worker\(s\)/g)?.length ?? 0;
    try {
      const runsync = async () => {
        const res = await fetch(`${emu!.url}/v2/py/runsync?wait=60000`, { method: "POST", headers: AUTH, body: JSON.stringify({ input: {} }), signal: AbortSignal.timeout(30_000) });
        return ((await res.json()) as { output?: unknown }).output;
      };
      expect(await runsync()).toEqual({ v: "one" });
      // A window of 40 writes of each file with the worker running.
      const from = writes;
      await eventually(() => (writes >= from + 40 ? true : undefined), 20_000, "40 more writes");
      writeFileSync(join(dir, "handler.py"), handler("two"));
      // The old process gone and the new one started: the next job runs the new code.
      await eventually(() => (restarts() > 0 && (err.match(/minipod: started: /g)?.length ?? 0) >= 2 ? true : undefined), 20_000, "the restart");
      expect(await runsync(), err).toEqual({ v: "two" });
      const after = writes;
      await eventually(() => (writes >= after + 20 ? true : undefined), 20_000, "20 more writes");
      // One restart, for the edit of the handler alone; none for what was written beside it.
      expect(err.match(/minipod worker: .* changed: restarting the worker\(s\)/g)).toEqual(["minipod worker: handler.py changed: restarting the worker(s)"]);
      expect(err.match(/minipod: started: /g)).toHaveLength(2);
    } finally {
      clearInterval(writer);
      child.kill("SIGTERM");
      await exited;
    }
  });
});
