import type { EmulatorRuntime } from "../compose/runtime.js";
import { EXTERNAL_HANDLER } from "../domain/external-workers.js";
import { newWorkerId } from "../domain/ids.js";
import { WorkerProcess, workerEnv } from "./worker-process.js";

/** A worker process for an "external" endpoint, started by the emulator (what `minipod worker` runs). */
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
  /** More environment for the process; it wins over minipod's RUNPOD_* variables. */
  env?: Record<string, string>;
  /** Each line it writes, prefixed with `[workerId] `; default: the emulator's `log` option, else stderr. */
  output?: (line: string) => void;
}

/** A stopped emulator gives its worker processes this long after SIGTERM (their polls are answered at once). */
const EMULATOR_WORKER_GRACE_MS = 3000;

/** The worker processes an emulator started: stopped with it. */
export class EmulatorWorkers {
  private readonly running = new Set<WorkerProcess>();
  private readonly byWorker = new Map<string, WorkerProcess>();

  constructor(
    private readonly core: EmulatorRuntime,
    private readonly url: string,
    private readonly defaultOutput: (line: string) => void,
  ) {
    // A worker that asks to be stopped after its job is replaced by a fresh one, as the platform does.
    core.workerProtocol.onWorkerStopped(({ endpointId, workerId }) => this.byWorker.get(`${endpointId}/${workerId}`)?.refresh());
  }

  start(spec: WorkerSpec): WorkerProcess {
    const endpoint = this.core.scheduler.spec(spec.endpoint);
    if (!endpoint) throw new Error(`startWorker: no endpoint "${spec.endpoint}"`);
    if (endpoint.handler !== EXTERNAL_HANDLER) throw new Error(`startWorker: endpoint "${spec.endpoint}" runs simulated workers; give it "handler": "external"`);
    const workerId = spec.workerId ?? newWorkerId();
    const { protocol } = this;
    const env = workerEnv({ url: this.url, endpoint: spec.endpoint, workerId, key: spec.key ?? "minipod-worker", pingIntervalMs: protocol.workers.settings.pingIntervalMs, batch: spec.batch });
    const output = spec.output ?? this.defaultOutput;
    const proc = new WorkerProcess({
      command: spec.command,
      workerId,
      env: { ...process.env, ...env, ...spec.env },
      cwd: spec.cwd,
      restart: spec.restart,
      output: (line) => output(line),
      graceMs: EMULATOR_WORKER_GRACE_MS,
      onStopping: () => {
        if (protocol.workers.get(spec.endpoint, workerId)) protocol.stopWorker(spec.endpoint, workerId);
      },
      onExit: (reason) => protocol.workerExited(spec.endpoint, workerId, reason),
    });
    const key = `${spec.endpoint}/${workerId}`;
    this.running.add(proc);
    this.byWorker.set(key, proc);
    void proc.exited.then(() => {
      this.running.delete(proc);
      if (this.byWorker.get(key) === proc) this.byWorker.delete(key);
    });
    return proc.start();
  }

  /** Stops every worker process it started; resolves when they are gone. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running].map((p) => p.stop()));
  }

  private get protocol() {
    return this.core.workerProtocol;
  }
}
