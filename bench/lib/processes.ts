import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root and the bench folder, whatever the working directory. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const BENCH = join(ROOT, "bench");
export const HOST = "127.0.0.1";
/** Sent on every request: minipod's queue routes need an API key once authentication is on. */
export const API_KEY = "bench-key";
export const AUTH = { authorization: `Bearer ${API_KEY}` };

export interface Server {
  name: string;
  url: string;
  port: number;
  child: ChildProcess;
  /** Wall ms from spawn to the first 200 on the ready path. */
  startMs: number;
  stop(): Promise<void>;
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc: the figure a busy machine
 * moves least, since time spent waiting for a core is not in it.
 */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces, inside parentheses): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
}

/** A free loopback port (the OS picks one, we release it and hand it on). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, HOST, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Resident set size and its peak (VmHWM) of a process, in bytes; undefined where /proc is missing. */
export function memoryOf(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string) => Number(/\s(\d+) kB/.exec(status.split("\n").find((l) => l.startsWith(key)) ?? "")?.[1] ?? NaN) * 1024;
    return { rss: kb("VmRSS:"), peak: kb("VmHWM:") };
  } catch {
    return undefined;
  }
}

/** Polls `url` until it answers 200; returns the wall ms it took, or throws after `timeoutMs`. */
/** Samples a process's RSS every half second: `[wall seconds since the start, RSS bytes]`. */
export function rssSampler(pid: number): { samples: Array<[number, number]>; stop: () => void } {
  const samples: Array<[number, number]> = [];
  const started = performance.now();
  const timer = setInterval(() => {
    const m = memoryOf(pid);
    if (m) samples.push([(performance.now() - started) / 1000, m.rss]);
  }, 500);
  return { samples, stop: () => clearInterval(timer) };
}

export async function waitFor200(url: string, child: ChildProcess, started: number, timeoutMs = 30_000): Promise<number> {
  const deadline = started + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with code ${child.exitCode} before answering`);
    try {
      const res = await fetch(url, { headers: AUTH, signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - started;
    } catch {
      /* not listening yet */
    }
    if (performance.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill("SIGKILL"), 5000);
      child.once("exit", () => {
        clearTimeout(force);
        resolve();
      });
      child.kill("SIGTERM");
    });
}

async function launch(name: string, command: string, args: string[], readyPath: string, port: number, env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const url = `http://${HOST}:${port}`;
  let startMs: number;
  try {
    startMs = await waitFor200(url + readyPath, child, started);
  } catch (e) {
    child.kill("SIGKILL");
    throw new Error(`${name} did not start: ${(e as Error).message}\n${stderr}`);
  }
  return { name, url, port, child, startMs, stop: stopper(child) };
}

export interface MinipodOptions {
  config: object;
  clock?: "real" | "manual";
  speed?: number;
  db?: string;
  extraArgs?: string[];
  /** Another build's bin/minipod.js (a baseline); default this checkout's. */
  bin?: string;
  /** A file the process appends memory and event-loop figures to (see lib/process-probe.mjs). */
  probeFile?: string;
  /** How often the probe writes a line (ms, default 250). */
  probeMs?: number;
  /** Flags for node itself (`--max-old-space-size=…`). */
  nodeArgs?: string[];
}

/** Starts the real CLI (bin/minipod.js → dist/minipod.js) on a free loopback port. */
export async function startMinipod(o: MinipodOptions): Promise<Server> {
  const port = await freePort();
  const cfg = join(tmpdir(), `minipod-bench-${process.pid}-${port}.json`);
  writeFileSync(cfg, JSON.stringify(o.config));
  // BENCH_CPU_PROF=DIR profiles every minipod process (`node --cpu-prof`); see profile-summary.ts.
  const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const probe = o.probeFile ? ["--import", join(BENCH, "lib/process-probe.mjs")] : [];
  const args = [
    ...(o.nodeArgs ?? []),
    ...prof,
    ...probe,
    o.bin ?? join(ROOT, "bin/minipod.js"),
    "--config",
    cfg,
    "--host",
    HOST,
    "--port",
    String(port),
    "--log-level",
    "warn",
    "--clock",
    o.clock ?? "real",
  ];
  if (o.speed) args.push("--speed", String(o.speed));
  if (o.db) args.push("--db", o.db);
  args.push(...(o.extraArgs ?? []));
  const first = (o.config as { endpoints?: Array<{ id: string }> }).endpoints?.[0]?.id ?? "echo";
  return launch("minipod", process.execPath, args, `/v2/${first}/health`, port, o.probeFile ? { MINIPOD_PROBE_FILE: o.probeFile, MINIPOD_PROBE_MS: String(o.probeMs ?? 250) } : {});
}

/** The ceiling: a bare Hono route on @hono/node-server answering the same JSON with no work. */
export async function startBare(): Promise<Server> {
  const port = await freePort();
  return launch("bare hono", process.execPath, ["--import", "tsx", join(BENCH, "servers/bare.ts"), String(port)], "/v2/echo/health", port);
}

/** The floor of a server that keeps its jobs: one INSERT per /run, one SELECT per /status (servers/floor.ts). */
export async function startFloor(): Promise<Server> {
  const port = await freePort();
  return launch("floor", process.execPath, ["--import", "tsx", join(BENCH, "servers/floor.ts"), String(port)], "/v2/echo/health", port);
}

/** Stoplight Prism mocking minipod's own /openapi.json (static examples, logging at warn). */
export async function startPrism(openapiFile: string): Promise<Server> {
  const port = await freePort();
  const bin = join(BENCH, "node_modules/@stoplight/prism-cli/dist/index.js");
  return launch("prism", process.execPath, [bin, "mock", "-h", HOST, "-p", String(port), "-v", "warn", openapiFile], "/v2/echo/health", port);
}
