// A process that starts minipod, or worker processes through createEmulator, and is killed with
// SIGKILL leaves nothing running: what it started ends with it.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/python.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BIN = `${ROOT}bin/minipod.js`;
/** A process that runs until it is stopped, standing in for a worker that never gives up. */
const FOREVER = [process.execPath, "-e", "setInterval(() => {}, 1000)"];

/** Whether a process runs (a zombie no parent has reaped yet has ended: it runs no more code). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * Runs `script` (an ES module) in a node process that prints one JSON line of the pids it
 * started, kills that process with SIGKILL, and resolves with those pids.
 */
async function killParentOf(script: string): Promise<Record<string, number>> {
  const parent = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  parent.stdout.on("data", (d: Buffer) => (out += d.toString()));
  parent.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise((r) => parent.once("exit", r));
  try {
    const pids = await eventually(
      () => (out.includes("\n") ? (JSON.parse(out.split("\n")[0]!) as Record<string, number>) : parent.exitCode !== null ? Promise.reject(new Error(err)) : undefined),
      30_000,
      "the pids",
    );
    for (const [name, pid] of Object.entries(pids)) expect(running(pid), `${name} before`).toBe(true);
    return pids;
  } finally {
    parent.kill("SIGKILL");
    await exited;
  }
}

/** Resolves once none of `pids` runs; fails naming those still running after 2 s (and kills them, not to leave them behind). */
async function gone(pids: Record<string, number>): Promise<void> {
  const deadline = Date.now() + 2000;
  while (Object.values(pids).some(running) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  const left = Object.entries(pids).filter(([, pid]) => running(pid));
  for (const [, pid] of left) process.kill(pid, "SIGKILL");
  expect(left.map(([name]) => name)).toEqual([]);
}

describe("no orphans when the parent is killed", { timeout: 60_000 }, () => {
  it("worker processes started by createEmulator end with the process that started them", async () => {
    const pids = await killParentOf(`
      import { createEmulator } from "./dist/index.js";
      const emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "w", handler: "external" }, { id: "lb", type: "LOAD_BALANCER", handler: "external" }] } });
      const queue = emu.startWorker({ endpoint: "w", command: ${JSON.stringify(FOREVER)}, output: () => {} });
      const server = emu.startWorker({ endpoint: "lb", command: ${JSON.stringify(FOREVER)}, output: () => {} });
      const started = () => queue.pid !== undefined && server.pid !== undefined;
      while (!started()) await new Promise((r) => setTimeout(r, 20));
      console.log(JSON.stringify({ queue: queue.pid, server: server.pid }));
    `);
    await gone(pids);
  });

  it("minipod and minipod worker started with --exit-on-stdin-close end with the process holding their stdin, and so do the worker's processes", async () => {
    const config = join(mkdtempSync(join(tmpdir(), "minipod-orphans-")), "emulator.config.json");
    writeFileSync(config, JSON.stringify({ endpoints: [{ id: "w", handler: "external" }] }));
    const pids = await killParentOf(`
      import { spawn } from "node:child_process";
      const server = spawn(process.execPath, [${JSON.stringify(BIN)}, "--port", "0", "--clock", "manual", "--exit-on-stdin-close", "--config", ${JSON.stringify(config)}], { stdio: ["pipe", "pipe", "inherit"] });
      let out = "";
      server.stdout.on("data", (d) => (out += d));
      while (!/listening on (\\S+)/.test(out)) await new Promise((r) => setTimeout(r, 20));
      const url = /listening on (\\S+)/.exec(out)[1];
      const worker = spawn(process.execPath, [${JSON.stringify(BIN)}, "worker", "--url", url, "--exit-on-stdin-close", "--", ...${JSON.stringify(FOREVER)}], { stdio: ["pipe", "pipe", "pipe"] });
      let said = "";
      worker.stderr.on("data", (d) => (said += d));
      while (!/started: .*\\(pid (\\d+)\\)/.test(said)) await new Promise((r) => setTimeout(r, 20));
      console.log(JSON.stringify({ server: server.pid, worker: worker.pid, process: Number(/started: .*\\(pid (\\d+)\\)/.exec(said)[1]) }));
    `);
    await gone(pids);
  });
});
