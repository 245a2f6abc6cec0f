import { options, parseFlags, WORKER_FLAGS } from "../config/cli-args.js";
import { ConfigError } from "../config/load.js";
import { newWorkerId } from "../domain/ids.js";
import { WorkerProcess, workerEnv } from "../launch/worker-process.js";
import { onStdinClose } from "./stdin-close.js";
import { watchWorkerSources } from "./watch-sources.js";
import { freePort, healthPathOf, lbWorkerEnv } from "../launch/lb-worker.js";
import { scaledWorkers } from "./scaled-workers.js";

export const WORKER_USAGE = `Usage: minipod worker [options] -- <command> [args...]

Runs a worker process (the service's worker runtime: python handler.py) against a running minipod,
with every RUNPOD_* variable the platform sets on a worker, pointed at one "external" endpoint.
On a load-balancing endpoint ("type": "LOAD_BALANCER"), the command is an HTTP server: it gets a
free port in PORT (and PORT_HEALTH, HEALTH_CHECK_PATH=/ping), and minipod routes requests to it
once its health check answers 200. There, by default, processes are started and stopped as the
endpoint's scaler asks (workersMin..workersMax on REQUEST_COUNT, an idle one stopped after
idleTimeout of virtual time), and one that exits is started again; --workers N runs a fixed set
of N instead (replaced when they exit only with --restart).

Options:
${options(WORKER_FLAGS)}

Each line the command writes is prefixed with [worker id]. Ctrl-C or SIGTERM stops the workers
(SIGTERM, then SIGKILL after 10 s); so does minipod stopping, but not minipod --watch restarting on
a config edit: the workers wait for it, suspended, and go on once it is back. A worker that asks to be stopped
after a job (refresh_worker) is replaced by a fresh one, as the platform does. With --watch, an
edit of the command's source files (.py for Python; .js, .ts, .mjs, .cjs... for Node) or of a
config file (requirements.txt, pyproject.toml, package.json, emulator.config.json...) under the
watched folders (the current one by default) restarts the workers at once (SIGKILL), once per edit:
a job they were running goes back to the queue and runs on the new code; what the worker writes
there (logs, databases, outputs, caches) restarts nothing.`;

interface Parsed {
  help?: boolean;
  url: string;
  endpoint: string | undefined;
  workerId: string | undefined;
  workers: number;
  /** --workers was given: a fixed set, also on a load-balancing endpoint (which is scaled otherwise). */
  fixed: boolean;
  key: string;
  restart: boolean;
  /** Folders and files whose edits restart the workers (`--watch`); empty without it. */
  watch: string[];
  batch: boolean;
  controlKey: string | undefined;
  /** `--exit-on-stdin-close`: stop when stdin closes. */
  stdinLifeline: boolean;
  command: string[];
}

function parse(argv: string[], env: NodeJS.ProcessEnv): Parsed {
  const dash = argv.indexOf("--");
  const own = dash === -1 ? argv : argv.slice(0, dash);
  const command = dash === -1 ? [] : argv.slice(dash + 1);
  const { values } = parseFlags(own, WORKER_FLAGS, WORKER_USAGE);
  if (values.help) return { help: true } as Parsed;
  const text = (name: string) => values[name] as string | undefined;
  if (command.length === 0) throw new ConfigError(`no command to run: put it after --, e.g. minipod worker -- python3 handler.py\n\n${WORKER_USAGE}`);
  const workers = text("workers") === undefined ? 1 : Number(text("workers"));
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new ConfigError(`--workers must be an integer from 1 to 64, got "${values.workers}"`);
  const workerId = text("worker-id");
  if (text("watch-path") !== undefined && values.watch !== true) throw new ConfigError("--watch-path needs --watch");
  if (workerId !== undefined && !/^[A-Za-z0-9_.-]{1,100}$/.test(workerId)) throw new ConfigError(`--worker-id must be letters, digits, '.', '_' or '-', got "${workerId}"`);
  return {
    url: (text("url") ?? env.MINIPOD_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, ""),
    endpoint: text("endpoint"),
    workerId,
    workers,
    fixed: text("workers") !== undefined,
    key: text("key") ?? env.RUNPOD_AI_API_KEY ?? "minipod-worker",
    restart: values.restart === true,
    watch: values.watch === true ? (text("watch-path") ?? ".").split(",").map((w) => w.trim()).filter((w) => w !== "") : [],
    batch: values.batch === true,
    controlKey: text("control-key") ?? env.MINIPOD_CONTROL_KEY,
    stdinLifeline: values["exit-on-stdin-close"] === true,
    command,
  };
}

interface WorkersInfo {
  settings: { pingIntervalMs: number };
  endpoints: string[];
  loadBalancers?: string[];
}

async function readWorkersInfo(p: Parsed, headers: Record<string, string>): Promise<WorkersInfo> {
  let res: Response;
  try {
    res = await fetch(`${p.url}/_emulator/workers`, { headers });
  } catch (e) {
    throw new ConfigError(`cannot reach minipod at ${p.url}: ${(e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message}; is it running? (--url sets where)`);
  }
  if (res.status === 401) throw new ConfigError(`minipod at ${p.url} has a controlKey: give it with --control-key (or MINIPOD_CONTROL_KEY)`);
  if (!res.ok) throw new ConfigError(`minipod at ${p.url} answered ${res.status} to GET /_emulator/workers: ${await res.text()}`);
  return (await res.json()) as WorkersInfo;
}

/**
 * One heartbeat with the worker's key before anything starts: a refused key would otherwise make
 * the library retry its requests thousands of times a second.
 */
async function checkKey(p: Parsed, endpoint: string, workerId: string): Promise<void> {
  const res = await fetch(`${p.url}/v2/${encodeURIComponent(endpoint)}/ping/${encodeURIComponent(workerId)}`, { headers: { authorization: p.key } });
  if (res.ok) return;
  const detail = ((await res.json().catch(() => ({}))) as { detail?: string }).detail ?? res.statusText;
  const hint = res.status === 401 || res.status === 403 ? ": give a key minipod accepts, with the worker scope (--key or RUNPOD_AI_API_KEY)" : "";
  throw new ConfigError(`minipod refused the worker's key on endpoint ${endpoint} (${res.status} ${detail})${hint}`);
}

function chooseEndpoint(p: Parsed, info: WorkersInfo): string {
  const all = [...info.endpoints, ...(info.loadBalancers ?? [])];
  const listed = all.length ? all.join(", ") : 'none (give an endpoint "handler": "external" in the config)';
  if (p.endpoint !== undefined) {
    if (!all.includes(p.endpoint)) throw new ConfigError(`endpoint "${p.endpoint}" is not served by worker processes at ${p.url}; endpoints with "handler": "external": ${listed}`);
    return p.endpoint;
  }
  if (all.length === 1) return all[0]!;
  throw new ConfigError(`choose the endpoint with --endpoint; endpoints with "handler": "external" at ${p.url}: ${listed}`);
}

/** How long the workers wait for a minipod that said it restarts (`minipod --watch` on a config edit). */
const RESTART_WAIT_MS = 30_000;

interface Follow {
  /** A worker asked to be stopped after its job (`stopPod`): whoever runs it replaces it. */
  onWorker(e: { endpointId: string; workerId: string }): void;
  /** minipod said it restarts: the workers are paused until it is back. */
  onRestarting(): void;
  /** minipod is back after a restart: the workers go on. */
  onBack(): void;
}

/**
 * Follows minipod's feed (without job events) until minipod stops, and says why it stopped
 * following: the feed ends when minipod resets, restores a snapshot or closes, saying which; on
 * `closing`, or when the feed breaks and minipod no longer answers, it is gone (the worker library,
 * refused, retries thousands of times a second). On `closing` with `restarting` (`minipod --watch`
 * reloading its config) the workers wait for it, paused, and go on once it answers again (at most
 * RESTART_WAIT_MS), if it still serves their endpoint.
 */
async function followMinipod(url: string, endpoint: string, headers: Record<string, string>, stopped: AbortSignal, o: Follow): Promise<string> {
  let failures = 0;
  while (!stopped.aborted) {
    let restarting = false;
    try {
      const res = await fetch(`${url}/_emulator/feed?jobs=false`, { headers, signal: stopped });
      failures = 0;
      let text = "";
      if (res.body) {
        for await (const chunk of res.body.pipeThrough(new TextDecoderStream())) {
          text += chunk;
          let end;
          while ((end = text.indexOf("\n\n")) >= 0) {
            const event = /^event: (\S+)$/m.exec(text.slice(0, end))?.[1];
            const data = /^data: (.*)$/m.exec(text.slice(0, end))?.[1] ?? "{}";
            text = text.slice(end + 2);
            if (event === "resync") {
              const said = JSON.parse(data) as { closing?: boolean; restarting?: boolean };
              if (said.restarting) restarting = true;
              else if (said.closing) return "stopped";
            }
            if (event === "worker") o.onWorker(JSON.parse(data) as { endpointId: string; workerId: string });
          }
        }
      }
    } catch {
      if (stopped.aborted) return "stopped";
      if (!restarting) {
        // Refused or reset: one more try shortly, in case the feed only broke.
        if (++failures >= 2) return "stopped";
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (restarting) {
      o.onRestarting();
      const back = await waitForRestart(url, endpoint, headers, stopped);
      if (back !== undefined) return back;
      o.onBack();
    }
  }
  return "stopped";
}

/** Waits for a restarting minipod to answer again: undefined once it does and still serves `endpoint`, else why the workers stop. */
async function waitForRestart(url: string, endpoint: string, headers: Record<string, string>, stopped: AbortSignal): Promise<string | undefined> {
  const deadline = Date.now() + RESTART_WAIT_MS;
  while (!stopped.aborted && Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/_emulator/workers`, { headers, signal: AbortSignal.any([stopped, AbortSignal.timeout(2_000)]) });
      if (res.ok) {
        const info = (await res.json()) as WorkersInfo;
        return [...info.endpoints, ...(info.loadBalancers ?? [])].includes(endpoint) ? undefined : `restarted without endpoint ${endpoint}`;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return stopped.aborted ? "stopped" : `did not come back within ${RESTART_WAIT_MS / 1000} s of its restart`;
}

/** `minipod worker [options] -- <command>`: resolves with the exit code. */
export async function workerCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const p = parse(argv, env);
  if (p.help) {
    process.stdout.write(WORKER_USAGE + "\n");
    return 0;
  }
  const headers: Record<string, string> = p.controlKey ? { authorization: `Bearer ${p.controlKey}` } : {};
  const info = await readWorkersInfo(p, headers);
  const endpoint = chooseEndpoint(p, info);
  let hinted = false;
  const write = (line: string, stream: "stdout" | "stderr") => {
    (stream === "stdout" ? process.stdout : process.stderr).write(line + "\n");
    // The first thing a new Python user meets: the command's Python lacks the service's library.
    if (!hinted && /No module named '?runpod'?/.test(line)) {
      hinted = true;
      process.stderr.write(
        `minipod worker: the command's Python cannot import runpod, the service's library: install it in that Python's environment (pip install runpod), or run the Python that has it (e.g. .venv/bin/python handler.py)\n`,
      );
    }
  };
  if (info.loadBalancers?.includes(endpoint) && !p.fixed) {
    return scaledWorkers({ url: p.url, endpoint, key: p.key, command: p.command, workerId: p.workerId, watch: p.watch, stdinLifeline: p.stdinLifeline, headers, env, output: write });
  }
  const base = p.workerId ?? newWorkerId();
  const ids = p.workers === 1 ? [base] : Array.from({ length: p.workers }, (_, i) => `${base}-${i + 1}`);
  const servers = info.loadBalancers?.includes(endpoint) ? await serverEnvs(p, endpoint, ids, env, headers) : undefined;
  if (!servers) await checkKey(p, endpoint, ids[0]!);
  /** minipod being told of exited processes: waited for before the launcher itself exits. */
  const exitNotices = new Set<Promise<void>>();
  const processes = ids.map(
    (workerId) =>
      new WorkerProcess({
        command: p.command,
        workerId,
        env: servers?.get(workerId) ?? { ...env, ...workerEnv({ url: p.url, endpoint, workerId, key: p.key, pingIntervalMs: info.settings.pingIntervalMs, batch: p.batch }) },
        restart: p.restart,
        output: write,
        onStopping: () => {
          if (servers) return;
          void fetch(`${p.url}/_emulator/workers/${encodeURIComponent(endpoint)}/${encodeURIComponent(workerId)}/stop`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: "{}",
          }).catch(() => {});
        },
        onExit: (reason) => {
          const body = JSON.stringify(servers ? { reason, stopped: stopping || !p.restart } : { reason });
          const route = servers ? `load-balancers/${encodeURIComponent(endpoint)}/workers/${encodeURIComponent(workerId)}` : `workers/${encodeURIComponent(endpoint)}/${encodeURIComponent(workerId)}`;
          const told = fetch(`${p.url}/_emulator/${route}/exited`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body,
            signal: AbortSignal.timeout(5_000),
          }).then(
            () => undefined,
            () => undefined,
          );
          exitNotices.add(told);
          void told.finally(() => exitNotices.delete(told));
        },
      }),
  );
  process.stderr.write(
    `minipod worker: ${ids.length} ${p.batch ? "batch " : ""}worker(s) for endpoint ${endpoint} of ${p.url}: ${ids.join(", ")}${p.restart ? " (restarted when they exit)" : ""}; Ctrl-C stops them\n`,
  );

  const stopped = new AbortController();
  let stopping = false;
  const stopAll = (why: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`minipod worker: ${why}: stopping the worker(s)\n`);
    stopped.abort();
    for (const w of processes) void w.stop();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`minipod worker: ${signal} again: killing the worker(s)\n`);
      for (const w of processes) if (w.pid !== undefined) killQuietly(-w.pid);
      process.exit(1);
    }
    stopAll(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  if (p.stdinLifeline) onStdinClose(() => stopAll("stdin closed"));

  for (const w of processes) w.start();
  if (p.watch.length > 0) {
    const unwatch = watchWorkerSources(p.watch, p.command, (why) => {
      // At once: a job running on the old code goes back to the queue, for the new code.
      for (const w of processes) w.refresh(why, { kill: true });
    });
    stopped.signal.addEventListener("abort", unwatch);
  }
  void followMinipod(p.url, endpoint, headers, stopped.signal, {
    onWorker: (e) => {
      if (e.endpointId === endpoint) processes.find((w) => w.workerId === e.workerId)?.refresh();
    },
    onRestarting: () => {
      process.stderr.write(`minipod worker: minipod at ${p.url} is restarting: the worker(s) wait for it\n`);
      for (const w of processes) w.pause();
    },
    onBack: () => {
      process.stderr.write(`minipod worker: minipod at ${p.url} is back: the worker(s) go on\n`);
      for (const w of processes) w.resume();
    },
  }).then((why) => {
    if (!stopped.signal.aborted) stopAll(`minipod at ${p.url} ${why}`);
  });
  const codes = await Promise.all(processes.map((w) => w.exited));
  await Promise.all(exitNotices);
  stopped.abort();
  return stopping ? 0 : codes.reduce<number>((worst, c) => Math.max(worst, c ?? 1), 0);
}

/**
 * Load-balancing workers: a free port each, registered with minipod (which checks their health and
 * routes to them once ready); the environment each process gets.
 */
async function serverEnvs(p: Parsed, endpoint: string, ids: string[], env: NodeJS.ProcessEnv, headers: Record<string, string>): Promise<Map<string, NodeJS.ProcessEnv>> {
  const out = new Map<string, NodeJS.ProcessEnv>();
  const healthPath = healthPathOf(env);
  for (const workerId of ids) {
    const port = await freePort();
    const res = await fetch(`${p.url}/_emulator/load-balancers/${encodeURIComponent(endpoint)}/workers`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ workerId, port, healthPath }),
    });
    if (!res.ok) throw new ConfigError(`minipod at ${p.url} refused worker ${workerId} of endpoint ${endpoint}: ${res.status} ${await res.text()}`);
    out.set(workerId, { ...env, ...lbWorkerEnv({ url: p.url, endpoint, workerId, key: p.key, port, healthPath }) });
  }
  return out;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}
