import { spawn, type ChildProcess } from "node:child_process";
import { reaperOf } from "./reaper.js";

/** Where the worker library finds minipod, for one worker of one endpoint. */
export interface WorkerEnvOptions {
  /** minipod's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  endpoint: string;
  workerId: string;
  /** The API key the worker sends (bare, as the platform gives it). */
  key: string;
  pingIntervalMs: number;
  /** One of the endpoint's batch workers: it takes batch requests only. */
  batch?: boolean | undefined;
}

/**
 * Where the service's Python clients find each of its hosts, all of them minipod, as runpod-flash
 * reads them (its `core/urls.py`): the GraphQL API, the endpoints (`RUNPOD_ENDPOINT_BASE_URL`, read
 * by runpod too), the REST API, the log service and the console. Set as one: with only some of
 * them set, runpod-flash warns of a "Partial Runpod URL override" as it is imported.
 */
export function serviceUrls(url: string): Record<string, string> {
  const root = url.replace(/\/+$/, "");
  return {
    RUNPOD_API_BASE_URL: root,
    RUNPOD_ENDPOINT_BASE_URL: `${root}/v2`,
    RUNPOD_REST_API_URL: `${root}/v1`,
    RUNPOD_HAPI_URL: root,
    RUNPOD_CONSOLE_URL: root,
  };
}

/**
 * Every variable the service's worker library reads, as the platform sets them on a worker: the
 * job id in the result URLs' path, `$ID` and `$RUNPOD_POD_ID` left for the library to fill in,
 * the fitness checks that need a GPU or the network skipped. The service's URLs (`serviceUrls`, not
 * set by the platform) point the clients a handler uses (runpod, runpod-flash) at minipod too.
 */
export function workerEnv(o: WorkerEnvOptions): Record<string, string> {
  const base = `${o.url.replace(/\/+$/, "")}/v2`;
  const ep = `${base}/${encodeURIComponent(o.endpoint)}`;
  const gpu = "?gpu=minipod";
  return {
    RUNPOD_WEBHOOK_GET_JOB: `${ep}/job-take/$ID${gpu}${o.batch ? "&pool=batch" : ""}`,
    RUNPOD_WEBHOOK_POST_OUTPUT: `${ep}/job-done/$RUNPOD_POD_ID/$ID${gpu}`,
    RUNPOD_WEBHOOK_POST_STREAM: `${ep}/job-stream/$RUNPOD_POD_ID/$ID${gpu}`,
    RUNPOD_WEBHOOK_PING: `${ep}/ping/$RUNPOD_POD_ID`,
    RUNPOD_AI_API_KEY: o.key,
    RUNPOD_POD_ID: o.workerId,
    RUNPOD_POD_HOSTNAME: `${o.workerId}-minipod`,
    RUNPOD_ENDPOINT_ID: o.endpoint,
    RUNPOD_PING_INTERVAL: String(o.pingIntervalMs),
    RUNPOD_SKIP_AUTO_SYSTEM_CHECKS: "true",
    RUNPOD_SKIP_GPU_CHECK: "true",
    ...serviceUrls(o.url),
  };
}

/**
 * Variables of minipod's own environment that say a process is a developer's own, which a worker
 * on the service never has: `FLASH_IS_LIVE_PROVISIONING` (what `flash dev` sets, and a user
 * exports to run a Flash script against minipod). In a worker process it would make runpod-flash,
 * imported by a function or by its unpickled arguments, take the worker for local development:
 * log to `.flash/logs/` of its working directory, and provision the endpoints of nested calls live.
 */
const DEVELOPERS_ONLY = ["FLASH_IS_LIVE_PROVISIONING"];

/**
 * What a worker process inherits of minipod's environment: all of it (PATH, the interpreter's
 * variables, the user's own) but `DEVELOPERS_ONLY`. An `images` entry's `env` may still set those.
 */
export function inheritedEnv(from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...from };
  for (const name of DEVELOPERS_ONLY) delete env[name];
  return env;
}

export interface WorkerProcessOptions {
  /** The command and its arguments, e.g. ["python3", "handler.py"]. */
  command: string[];
  workerId: string;
  /** The whole environment of the process. */
  env: NodeJS.ProcessEnv;
  cwd?: string | undefined;
  /** Start the command again when it exits (1 s later, up to 30 s while it keeps failing fast). */
  restart?: boolean | undefined;
  /** Each line the process writes, prefixed with `[workerId] `. */
  output: (line: string, stream: "stdout" | "stderr") => void;
  /** Told when the process is being stopped, and every second until it exits (minipod answers its held polls). */
  onStopping?: (() => void) | undefined;
  /**
   * Told each time the process exits, with why ("exited with code 1", "killed by SIGKILL"), before
   * any restart: minipod loses the worker at once rather than after its heartbeats stop.
   */
  onExit?: ((reason: string) => void) | undefined;
  /** How long a stopped process has after SIGTERM before SIGKILL; default 10 s. */
  graceMs?: number | undefined;
}

const RESTART_FIRST_MS = 1000;
const RESTART_MAX_MS = 30_000;
/** A process that ran this long before exiting restarts after RESTART_FIRST_MS again. */
const RESTART_RESET_AFTER_MS = 10_000;
const GRACE_DEFAULT_MS = 10_000;
/** Lines longer than this are cut (a handler printing a huge blob stays readable). */
const LINE_MAX = 16 * 1024;

/**
 * One worker process: started in a process group of its own (as a container is), its output
 * prefixed line by line, started again when it exits if asked, and stopped as a container is:
 * SIGTERM to the group, SIGKILL after the grace period. When the process exits, whatever it left
 * in its group (the worker library's heartbeat process) is killed with it; and so is the group
 * when this process ends without stopping it (the reaper).
 */
export class WorkerProcess {
  private child: ChildProcess | undefined;
  private stopping = false;
  private refreshing = false;
  private paused = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private delay = RESTART_FIRST_MS;
  private startedAt = 0;
  private resolveExited!: (code: number | null) => void;
  /** Resolves with the last exit code (null when a signal ended it) once the process is gone for good. */
  readonly exited: Promise<number | null>;
  /** Times the command was started. */
  starts = 0;

  constructor(private readonly o: WorkerProcessOptions) {
    this.exited = new Promise((resolve) => (this.resolveExited = resolve));
  }

  get workerId(): string {
    return this.o.workerId;
  }

  /** The pid of the running process, if one runs. */
  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  start(): this {
    const [cmd, ...args] = this.o.command;
    if (!cmd) throw new Error("no command to run: give it after `--`, e.g. minipod worker -- python3 handler.py");
    this.starts++;
    this.startedAt = Date.now();
    const child = spawn(cmd, args, { cwd: this.o.cwd, env: this.o.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    this.child = child;
    if (child.pid !== undefined) reaperOf.watch(child.pid);
    this.say(`started: ${this.o.command.join(" ")} (pid ${child.pid ?? "?"})`);
    pipeLines(child.stdout!, (l) => this.o.output(`[${this.o.workerId}] ${l}`, "stdout"));
    pipeLines(child.stderr!, (l) => this.o.output(`[${this.o.workerId}] ${l}`, "stderr"));
    child.once("error", (e) => {
      this.say(`could not start ${cmd}: ${e.message}`);
      this.exitedOnce(child, null, null);
    });
    child.once("exit", (code, signal) => this.exitedOnce(child, code, signal));
    return this;
  }

  /** Stops the process (and any restart to come); resolves once it is gone. */
  async stop(): Promise<number | null> {
    if (!this.stopping) {
      this.stopping = true;
      clearTimeout(this.restartTimer);
      if (!this.terminate()) this.resolveExited(this.child?.exitCode ?? null);
    }
    return this.exited;
  }

  /**
   * Replaces the process with a fresh one (the worker asked to be stopped after a job: `stopPod`,
   * the library's `refresh_worker`; or its files changed, under `minipod worker --watch`), whether
   * or not it restarts on exit. `kill`: at once (SIGKILL), so a job it runs is not finished on the
   * old code but goes back to the queue, as a dead worker's does.
   */
  refresh(why = "it asked to be stopped after its job: refresh_worker", o: { kill?: boolean } = {}): void {
    if (this.stopping || this.refreshing) return;
    this.say(`replacing the worker (${why})`);
    this.refreshing = true;
    if (!this.terminate(o.kill ? 0 : undefined)) {
      this.refreshing = false;
      clearTimeout(this.restartTimer);
      this.start();
    }
  }

  /**
   * Suspends the running process's group (SIGSTOP) while the minipod it serves restarts, so the
   * worker library, refused, does not retry thousands of times a second; `resume` continues it.
   */
  pause(): void {
    if (this.child && this.pid !== undefined) {
      this.paused = true;
      killGroup(this.child, "SIGSTOP");
    }
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.child) killGroup(this.child, "SIGCONT");
  }

  /** SIGTERM to the running process's group, SIGKILL after the grace period (`graceMs`, 0: at once); false when none runs. */
  private terminate(graceMs = this.o.graceMs ?? GRACE_DEFAULT_MS): boolean {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return false;
    if (graceMs === 0) {
      killGroup(child, "SIGKILL");
      this.resume();
      return true;
    }
    killGroup(child, "SIGTERM");
    // A suspended process hears SIGTERM once continued.
    this.resume();
    this.o.onStopping?.();
    const poke = setInterval(() => this.o.onStopping?.(), 1000);
    const force = setTimeout(() => {
      this.say(`still running ${graceMs / 1000} s after SIGTERM: SIGKILL`);
      killGroup(child, "SIGKILL");
    }, graceMs);
    child.once("exit", () => {
      clearInterval(poke);
      clearTimeout(force);
    });
    return true;
  }

  private exitedOnce(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    // The library's heartbeat runs in a process of its own, which outlives a killed main process.
    killGroup(child, "SIGKILL");
    if (child.pid !== undefined) reaperOf.forget(child.pid);
    this.say(`exited ${signal ? `on ${signal}` : `with code ${code}`}`);
    this.o.onExit?.(`its process ${signal ? `was killed by ${signal}` : `exited with code ${code}`}`);
    if (this.refreshing && !this.stopping) {
      this.refreshing = false;
      this.start();
      return;
    }
    if (this.stopping || !this.o.restart) return this.resolveExited(code);
    this.delay = Date.now() - this.startedAt >= RESTART_RESET_AFTER_MS ? RESTART_FIRST_MS : this.delay;
    this.say(`restarting in ${this.delay / 1000} s`);
    this.restartTimer = setTimeout(() => {
      if (!this.stopping) this.start();
    }, this.delay);
    this.delay = Math.min(RESTART_MAX_MS, this.delay * 2);
  }

  private say(text: string): void {
    this.o.output(`[${this.o.workerId}] minipod: ${text}`, "stderr");
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

function pipeLines(stream: NodeJS.ReadableStream, line: (text: string) => void): void {
  let rest = "";
  stream.setEncoding?.("utf8");
  stream.on("data", (chunk: string) => {
    const parts = (rest + chunk).split(/\r?\n/);
    rest = parts.pop() ?? "";
    if (rest.length > LINE_MAX) {
      line(rest.slice(0, LINE_MAX) + " …");
      rest = "";
    }
    for (const p of parts) line(p.length > LINE_MAX ? p.slice(0, LINE_MAX) + " …" : p);
  });
  stream.on("end", () => {
    if (rest) line(rest);
  });
}
