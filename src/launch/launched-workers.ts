import type { LaunchEngine } from "./engine.js";
import { EXTERNAL_HANDLER } from "../domain/external-workers.js";
import { newWorkerId } from "../domain/ids.js";
import { inheritedEnv, WorkerProcess, workerEnv } from "./worker-process.js";
import { freePort, healthPathOf, lbWorkerEnv } from "./lb-worker.js";

/**
 * A worker process for an "external" endpoint, started by the emulator (what `minipod worker`
 * runs): on a queue endpoint it takes jobs with the worker library; on a load-balancing endpoint it
 * serves HTTP on the free port given in `PORT`.
 */
export interface WorkerSpec {
  /** The endpoint (its handler must be "external"). */
  endpoint: string;
  /** The command and its arguments, e.g. ["python3", "handler.py"]. */
  command: string[];
  /** RUNPOD_POD_ID; default: 14 random characters. */
  workerId?: string;
  /** The API key the worker sends; default "minipod-worker" (any key works until auth.keys is set). */
  key?: string;
  /** Start the command again when it exits. */
  restart?: boolean;
  /** One of the endpoint's batch workers: it takes the endpoint's batch requests, and only those. */
  batch?: boolean;
  cwd?: string;
  /**
   * Load-balancing endpoints: start and stop processes of this command as the endpoint's pool
   * scales (between workersMin and workersMax, on REQUEST_COUNT, idle ones stopped after
   * idleTimeout) instead of starting one (`createEmulator({ workers })`; see `scale`).
   */
  scaled?: boolean;
  /** More environment for the process; it wins over minipod's RUNPOD_* variables. */
  env?: Record<string, string>;
  /**
   * Queue endpoints: the process's cold start, in virtual ms: it is given no job before, and its
   * real start is not counted on the clock (see WorkerWaits); default none, its real start counts.
   */
  coldStartMs?: number;
  /** Each line it writes, prefixed with `[workerId] `; default: the emulator's `log` option, else stderr. */
  output?: (line: string) => void;
}

/** A stopped emulator gives its worker processes this long after SIGTERM (their polls are answered at once). */
const EMULATOR_WORKER_GRACE_MS = 3000;

/** The worker processes an emulator started: stopped with it. */
export class EmulatorWorkers {
  private readonly running = new Set<WorkerProcess>();
  private readonly byWorker = new Map<string, WorkerProcess>();
  /** Endpoints whose processes are started as their pool scales. */
  private readonly scaling = new Set<string>();

  constructor(
    private readonly core: Pick<LaunchEngine, "endpoints" | "loadBalancers" | "workerProtocol">,
    private readonly url: string,
    private readonly defaultOutput: (line: string) => void,
  ) {
    // A worker that asks to be stopped after its job is replaced by a fresh one, as the platform does.
    core.workerProtocol.onWorkerStopped(({ endpointId, workerId }) => this.byWorker.get(`${endpointId}/${workerId}`)?.refresh());
  }

  start(spec: WorkerSpec): WorkerProcess {
    const lb = this.core.endpoints.spec(spec.endpoint, "LOAD_BALANCER");
    if (lb) return this.startServer(spec, lb.handler === EXTERNAL_HANDLER);
    const endpoint = this.core.endpoints.spec(spec.endpoint, "QUEUE");
    if (!endpoint) throw new Error(`startWorker: no endpoint "${spec.endpoint}"`);
    if (endpoint.handler !== EXTERNAL_HANDLER) throw new Error(`startWorker: endpoint "${spec.endpoint}" runs simulated workers; give it "handler": "external"`);
    const workerId = spec.workerId ?? newWorkerId();
    const { protocol } = this;
    const env = workerEnv({ url: this.url, endpoint: spec.endpoint, workerId, key: spec.key ?? "minipod-worker", pingIntervalMs: protocol.workers.settings.pingIntervalMs, batch: spec.batch });
    const output = spec.output ?? this.defaultOutput;
    const proc = new WorkerProcess({
      command: spec.command,
      workerId,
      env: { ...inheritedEnv(), ...env, ...spec.env },
      cwd: spec.cwd,
      restart: spec.restart,
      output: (line) => output(line),
      graceMs: EMULATOR_WORKER_GRACE_MS,
      onStopping: () => {
        if (protocol.workers.get(spec.endpoint, workerId)) protocol.stopWorker(spec.endpoint, workerId);
      },
      onExit: (reason) => {
        starting();
        protocol.workerExited(spec.endpoint, workerId, reason);
      },
    });
    // Until it first calls, the process is starting: real work the clock does not skip past, or a cold start on the clock.
    const starting = protocol.expect(spec.endpoint, workerId, spec.coldStartMs);
    const key = `${spec.endpoint}/${workerId}`;
    this.running.add(proc);
    this.byWorker.set(key, proc);
    void proc.exited.then(() => {
      starting();
      this.running.delete(proc);
      if (this.byWorker.get(key) === proc) this.byWorker.delete(key);
    });
    return proc.start();
  }

  /**
   * A load-balancing endpoint's worker: its command gets a free port, and joins the pool once its
   * health check answers 200; an exit takes it out at once; gone for good, it is removed.
   */
  private startServer(spec: WorkerSpec, external: boolean): WorkerProcess {
    if (!external) throw new Error(`startWorker: load-balancing endpoint "${spec.endpoint}" is served in minipod's process; give it "handler": "external" to serve it with worker processes`);
    const lb = this.core.loadBalancers;
    const workerId = spec.workerId ?? newWorkerId();
    const env: NodeJS.ProcessEnv = inheritedEnv();
    const output = spec.output ?? this.defaultOutput;
    const proc = new WorkerProcess({
      command: spec.command,
      workerId,
      env,
      cwd: spec.cwd,
      restart: spec.restart,
      output: (line) => output(line),
      graceMs: EMULATOR_WORKER_GRACE_MS,
      onExit: () => lb.health(spec.endpoint, workerId, "unhealthy"),
    });
    let gone = false;
    this.running.add(proc);
    void proc.exited.then(() => {
      gone = true;
      this.running.delete(proc);
      lb.remove(spec.endpoint, workerId);
    });
    void freePort().then((port) => {
      if (gone) return;
      const healthPath = healthPathOf(spec.env);
      Object.assign(env, lbWorkerEnv({ url: this.url, endpoint: spec.endpoint, workerId, key: spec.key ?? "minipod-worker", port, healthPath }), spec.env);
      lb.register(spec.endpoint, workerId, { url: `http://127.0.0.1:${port}`, healthUrl: `http://127.0.0.1:${port}${healthPath}` });
      proc.start();
    });
    return proc;
  }

  /**
   * Worker processes of a load-balancing `external` endpoint, started and stopped as its pool
   * scales; `stop` ends the scaling and the processes.
   */
  scale(spec: WorkerSpec): { stop(): Promise<void> } {
    const lb = this.core.loadBalancers;
    const endpoint = this.core.endpoints.spec(spec.endpoint, "LOAD_BALANCER");
    if (!endpoint || endpoint.handler !== EXTERNAL_HANDLER) throw new Error(`scaleWorkers: "${spec.endpoint}" is not a load-balancing endpoint with "handler": "external"`);
    if (lb.launcherOf(spec.endpoint))
      throw new Error(`scaleWorkers: the worker processes of "${spec.endpoint}" are started and stopped by another launcher already (a minipod worker following its scaler)`);
    const procs = new Map<string, WorkerProcess>();
    this.scaling.add(spec.endpoint);
    lb.setLauncher(spec.endpoint, {
      start: () => {
        const proc = this.startServer({ ...spec, workerId: undefined, restart: false }, true);
        procs.set(proc.workerId, proc);
        void proc.exited.then(() => procs.delete(proc.workerId));
      },
      stop: (workerId) => void procs.get(workerId)?.stop(),
    });
    return {
      stop: async () => {
        this.scaling.delete(spec.endpoint);
        lb.setLauncher(spec.endpoint, undefined);
        await Promise.all([...procs.values()].map((p) => p.stop()));
      },
    };
  }

  /** Stops every worker process it started; resolves when they are gone. */
  async stopAll(): Promise<void> {
    // No process is started again for the ones that stop now.
    for (const endpoint of this.scaling) this.core.loadBalancers.setLauncher(endpoint, undefined);
    this.scaling.clear();
    await Promise.all([...this.running].map((p) => p.stop()));
  }

  private get protocol() {
    return this.core.workerProtocol;
  }
}
