import { ConfigError } from "../config/load.js";
import { newWorkerId } from "../domain/ids.js";
import { freePort, healthPathOf, lbWorkerEnv } from "../launch/lb-worker.js";
import { WorkerProcess } from "../launch/worker-process.js";
import { onStdinClose } from "./stdin-close.js";
import { watchWorkerSources } from "./watch-sources.js";

/** A process that exits sooner than this after its start makes the next start wait. */
const FAST_EXIT_MS = 10_000;
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;

/** What `minipod worker` parsed, for worker processes that follow a load-balancing endpoint's scaler. */
export interface ScaledWorkersOptions {
  url: string;
  endpoint: string;
  key: string;
  command: string[];
  /** Given: processes are named `ID-1`, `ID-2`...; else 14 random characters each. */
  workerId: string | undefined;
  /** Folders and files whose edits restart the processes; empty without `--watch`. */
  watch: string[];
  /** Stop when stdin closes (`--exit-on-stdin-close`). */
  stdinLifeline: boolean;
  /** The control key's header, when minipod has one. */
  headers: Record<string, string>;
  env: NodeJS.ProcessEnv;
  output: (line: string, stream: "stdout" | "stderr") => void;
}

/**
 * `minipod worker -- CMD` on a load-balancing endpoint: a process of CMD for each worker the
 * endpoint's pool wants, as minipod's scaler decides (`GET /_emulator/load-balancers/{id}/launcher`
 * tells when to start one and which to stop), each on a free port, registered so minipod checks its
 * health. One that exits leaves the pool, and the scaler asks for another as it would for any
 * missing worker; while processes keep exiting soon after they start, each next one waits (1 s,
 * doubling to 30 s), so a command that cannot start does not spin. Resolves with the exit code once
 * stopped (a signal, or minipod stopping).
 */
export async function scaledWorkers(o: ScaledWorkersOptions): Promise<number> {
  const stopped = new AbortController();
  const control = { ...o.headers, "content-type": "application/json" };
  const base = `${o.url}/_emulator/load-balancers/${encodeURIComponent(o.endpoint)}`;
  let res: Response;
  try {
    res = await fetch(`${base}/launcher`, { headers: o.headers, signal: stopped.signal });
  } catch (e) {
    throw new ConfigError(`cannot reach minipod at ${o.url}: ${(e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message}`);
  }
  if (!res.ok || !res.body) {
    const detail = ((await res.json().catch(() => ({}))) as { detail?: string }).detail ?? res.statusText;
    throw new ConfigError(`minipod at ${o.url} does not let this launcher scale endpoint ${o.endpoint} (${res.status}): ${detail}`);
  }

  const processes = new Map<string, WorkerProcess>();
  const exitNotices = new Set<Promise<unknown>>();
  let stopping = false;
  let started = 0;
  /** Wait before the next start: grows while processes exit soon after starting. */
  let backoff = 0;
  const tell = (path: string, body: unknown) => {
    const told = fetch(`${base}/${path}`, { method: "POST", headers: control, body: JSON.stringify(body), signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    exitNotices.add(told);
    void told.finally(() => exitNotices.delete(told));
    return told;
  };

  const startOne = async () => {
    if (backoff > 0) await new Promise((r) => setTimeout(r, backoff));
    if (stopping) return;
    const workerId = o.workerId !== undefined ? `${o.workerId}-${++started}` : newWorkerId();
    const port = await freePort();
    const healthPath = healthPathOf(o.env);
    const registered = await fetch(`${base}/workers`, { method: "POST", headers: control, body: JSON.stringify({ workerId, port, healthPath }) }).catch((e: Error) => e);
    if (registered instanceof Error || !registered.ok) {
      process.stderr.write(`minipod worker: minipod refused worker ${workerId}: ${registered instanceof Error ? registered.message : `${registered.status} ${await registered.text()}`}\n`);
      return;
    }
    if (stopping) return void tell(`workers/${encodeURIComponent(workerId)}/exited`, { stopped: true });
    const proc = new WorkerProcess({
      command: o.command,
      workerId,
      env: { ...o.env, ...lbWorkerEnv({ url: o.url, endpoint: o.endpoint, workerId, key: o.key, port, healthPath }) },
      output: o.output,
      // Gone from the pool at once: the scaler asks for a replacement if it still wants one.
      onExit: (reason) => {
        if (!stopping && processes.has(workerId)) backoff = Date.now() - startedAt < FAST_EXIT_MS ? Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_FIRST_MS, backoff * 2)) : 0;
        void tell(`workers/${encodeURIComponent(workerId)}/exited`, { reason, stopped: true });
      },
    });
    const startedAt = Date.now();
    processes.set(workerId, proc);
    void proc.exited.then(() => processes.delete(workerId));
    proc.start();
  };
  const stopOne = (workerId: string) => {
    const proc = processes.get(workerId);
    if (!proc) return;
    processes.delete(workerId);
    process.stderr.write(`minipod worker: ${workerId} is idle: minipod's scaler stops it\n`);
    void proc.stop();
  };

  const stopAll = (why: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`minipod worker: ${why}: stopping the worker(s)\n`);
    stopped.abort();
    for (const w of processes.values()) void w.stop();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`minipod worker: ${signal} again: killing the worker(s)\n`);
      for (const w of processes.values()) if (w.pid !== undefined) killQuietly(-w.pid);
      process.exit(1);
    }
    stopAll(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
  if (o.stdinLifeline) onStdinClose(() => stopAll("stdin closed"));
  process.stderr.write(`minipod worker: worker processes for endpoint ${o.endpoint} of ${o.url}, started and stopped as its scaler asks (workersMin..workersMax); Ctrl-C stops them\n`);
  if (o.watch.length > 0) {
    const unwatch = watchWorkerSources(o.watch, o.command, (why) => {
      for (const w of processes.values()) w.refresh(why);
    });
    stopped.signal.addEventListener("abort", unwatch);
  }

  // Every start and stop is taken in order; a start waits for its port and registration. One that
  // fails is said, and the next is taken all the same.
  let queue = Promise.resolve();
  const then = (step: () => unknown) => {
    queue = queue.then(step).then(
      () => undefined,
      (e: unknown) => void process.stderr.write(`minipod worker: ${(e as Error).message}\n`),
    );
  };
  let body: ReadableStream<Uint8Array> | undefined = res.body;
  let why = `minipod at ${o.url} stopped`;
  while (body) {
    let restarting = false;
    await readEvents(body, (event, data) => {
      if (event === "start") then(startOne);
      else if (event === "stop") then(() => stopOne((JSON.parse(data) as { workerId: string }).workerId));
      else if (event === "restarting") restarting = true;
    }).catch(() => undefined);
    if (!restarting || stopping) break;
    // minipod restarts (`minipod --watch`, a config edit): the processes it routed to go with it,
    // and the restarted one's scaler asks for those it wants.
    process.stderr.write(`minipod worker: minipod at ${o.url} is restarting: its worker processes stop, and new ones start once it is back\n`);
    await queue;
    const old = [...processes.values()];
    processes.clear();
    await Promise.all(old.map((w) => w.stop()));
    body = await launcherAgain(`${base}/launcher`, o.headers, stopped.signal);
    if (body) process.stderr.write(`minipod worker: minipod at ${o.url} is back\n`);
    else why = `minipod at ${o.url} did not come back within ${RESTART_WAIT_MS / 1000} s of its restart`;
  }
  stopAll(stopping ? "stopped" : why);
  await queue;
  await Promise.all([...processes.values()].map((w) => w.exited));
  await Promise.all(exitNotices);
  return 0;
}

/** How long the launcher waits for a minipod that said it restarts. */
const RESTART_WAIT_MS = 30_000;

/** The launcher stream of a restarted minipod, once it answers (at most RESTART_WAIT_MS); undefined if it does not. */
async function launcherAgain(url: string, headers: Record<string, string>, stopped: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
  const deadline = Date.now() + RESTART_WAIT_MS;
  while (!stopped.aborted && Date.now() < deadline) {
    try {
      const res = await fetch(url, { headers, signal: stopped });
      if (res.ok && res.body) return res.body;
      await res.body?.cancel();
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

/** Reads a Server-Sent Events body, calling `on` for each event, until it ends. */
async function readEvents(body: ReadableStream<Uint8Array>, on: (event: string, data: string) => void): Promise<void> {
  let text = "";
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    let end;
    while ((end = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const event = /^event: (\S+)$/m.exec(block)?.[1];
      if (event) on(event, /^data: (.*)$/m.exec(block)?.[1] ?? "{}");
    }
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}
