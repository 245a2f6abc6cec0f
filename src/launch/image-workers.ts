import type { LaunchEngine } from "./engine.js";
import { EXTERNAL_HANDLER } from "../domain/external-workers.js";
import { workerLog } from "../domain/logbook.js";
import type { EmulatorWorkers } from "./launched-workers.js";
import type { WorkerProcess } from "./worker-process.js";

/** What a worker process of an endpoint's image runs (the config's `images`, resolved). */
export interface ImageLaunch {
  command: string[];
  env: Record<string, string>;
  cwd?: string | undefined;
}

/** How often processes are checked against their endpoints (gone, no longer of that image, idle): wall ms. */
const SWEEP_MS = 1000;

/**
 * Worker processes for the queue endpoints whose image is a command (`images`): none until a job
 * is queued, then one more for each job waiting beyond the free places of the processes there are
 * (a process running several jobs at once may have some), up to workersMax
 * (at least one), each taking its first job after the endpoint's cold start on the virtual clock
 * (see WorkerWaits); a process whose endpoint has had no job in its queue or in progress for
 * idleTimeout (virtual seconds) is stopped down to workersMin; all of an endpoint's go with it, or
 * when its image no longer maps to that command. A load-balancing endpoint's are its pool's to
 * start and stop (`sweepLoadBalancers`). Each line a process writes is the worker's log.
 */
export class ImageWorkers {
  /** By endpoint: the launch its processes run (`launch` its text; `of`, the object it was read from), and the processes. */
  private readonly procs = new Map<string, { launch: string; of: ImageLaunch; set: Set<WorkerProcess> }>();
  /** When each endpoint last had work (virtual ms). */
  private readonly busyAt = new Map<string, number>();
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;
  /** Processes stopped on purpose (idle, endpoint gone, emulator closing): their end is no failure. */
  private readonly stopped = new WeakSet<WorkerProcess>();
  /** Load-balancing endpoints whose image is a command: the launcher of their pool, by endpoint. */
  private readonly scaled = new Map<string, { launch: string; stop(): Promise<void> }>();
  private closed = false;

  constructor(
    private readonly d: {
      core: Pick<LaunchEngine, "notifier" | "endpoints" | "clock" | "jobs" | "logs" | "workerProtocol" | "loadBalancers">;
      workers: EmulatorWorkers;
      /** What an endpoint's workers run, when its image is one of `images`; undefined otherwise. */
      launchOf(endpointId: string): ImageLaunch | undefined;
      output: (line: string) => void;
    },
  ) {
    this.unsubscribe = d.core.notifier.onAny((change) => {
      if (change.job?.status !== "IN_QUEUE") return;
      try {
        this.demand(change.endpointId, change.job.queuedAt);
      } catch (e) {
        // A process that cannot be started leaves the job queued; the request that queued it is answered all the same.
        d.output(`minipod: could not start a worker process for endpoint ${change.endpointId}: ${(e as Error).message}`);
      }
    });
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
    setImmediate(() => this.sweepLoadBalancers());
  }

  /** The processes running for an endpoint now. */
  running(endpointId: string): number {
    return this.procs.get(endpointId)?.set.size ?? 0;
  }

  /** `queuedAt`: when the job that asks for a worker was queued (virtual ms); a cold start counts from there. */
  private demand(endpointId: string, queuedAt: number): void {
    const spec = this.d.core.endpoints.spec(endpointId, "QUEUE");
    if (!spec || spec.handler !== EXTERNAL_HANDLER) return;
    const launch = this.d.launchOf(endpointId);
    if (!launch) return;
    let entry = this.procs.get(endpointId);
    // The same launch object (launchOf keeps it while nothing changed): nothing to compare.
    const key = entry?.of === launch ? entry.launch : JSON.stringify(launch);
    if (entry && entry.launch !== key) {
      this.stopAllOf(endpointId);
      entry = undefined;
    }
    if (!entry) this.procs.set(endpointId, (entry = { launch: key, of: launch, set: new Set() }));
    entry.of = launch;
    this.busyAt.set(endpointId, this.d.core.clock.now());
    const most = Math.max(spec.workersMax, 1);
    // All the processes it may have are there: nothing to count (a warm call queues a job a call).
    if (entry.set.size >= most) return;
    const { jobs } = this.d.core.jobs.health(endpointId);
    // Jobs waiting beyond the free places of the processes there are: one more process each.
    const wanted = Math.min(most, entry.set.size + jobs.inQueue - this.freePlaces(endpointId, entry.set));
    // The cold start counts from the job's coming (the process is started a moment later).
    const coldStartMs = Math.max(0, queuedAt + spec.coldStartMs - this.d.core.clock.now());
    while (entry.set.size < wanted) this.startOne(endpointId, launch, entry.set, coldStartMs);
  }

  /**
   * Jobs the endpoint's workers may take now: each live worker's free places (a worker running
   * several jobs at once asks for as many as it has room for), and one for each process of the set
   * that is not calling (starting, or being replaced).
   */
  private freePlaces(endpointId: string, set: Set<WorkerProcess>): number {
    const registry = this.d.core.workerProtocol.workers;
    let free = 0;
    for (const w of registry.records(endpointId)) free += registry.freePlaces(w);
    for (const proc of set) if (registry.get(endpointId, proc.workerId)?.status !== "live") free++;
    return free;
  }

  private startOne(endpointId: string, launch: ImageLaunch, set: Set<WorkerProcess>, coldStartMs: number): void {
    const { core } = this.d;
    const started: { proc?: WorkerProcess } = {};
    const proc = this.d.workers.start({
      endpoint: endpointId,
      command: launch.command,
      env: launch.env,
      cwd: launch.cwd,
      // The endpoint's cold start, on the virtual clock: the process's real start does not count.
      coldStartMs,
      output: (line) => this.workerLine(line, started.proc?.workerId),
    });
    started.proc = proc;
    set.add(proc);
    void proc.exited.then(() => {
      set.delete(proc);
      // One that never asked for a job could not start: say what it ran, as its jobs wait on.
      if (!this.closed && !this.stopped.has(proc) && !core.workerProtocol.workers.list(endpointId).some((w) => w.id === proc.workerId)) {
        this.d.output(
          `[${proc.workerId}] minipod: the worker process of endpoint ${endpointId} ended before it asked for a job; its jobs stay queued. It ran: ${launch.command.join(" ")} (the interpreter is MINIPOD_PYTHON, else python3; see the config's images)`,
        );
      }
    });
  }

  /**
   * A load-balancing endpoint whose image is a command gets its processes from its pool's one
   * scaling rule (REQUEST_COUNT, workersMin..workersMax, idleTimeout): minipod is its launcher, each
   * process serving HTTP on the free port minipod gives it in PORT (the template's PORT, the
   * service's 80, is left out). Gone or changed, its launcher and processes go.
   */
  private sweepLoadBalancers(): void {
    if (this.closed) return;
    const { core, workers } = this.d;
    const seen = new Set<string>();
    for (const spec of core.endpoints.specs("LOAD_BALANCER")) {
      const launch = spec.handler === EXTERNAL_HANDLER ? this.d.launchOf(spec.id) : undefined;
      if (!launch) continue;
      seen.add(spec.id);
      const key = JSON.stringify(launch);
      const current = this.scaled.get(spec.id);
      if (current?.launch === key) continue;
      if (current) {
        this.scaled.delete(spec.id);
        void current.stop();
      }
      // Another launcher (a minipod worker following the pool) keeps its endpoint.
      if (core.loadBalancers.launcherOf(spec.id)) continue;
      const { PORT: _port, PORT_HEALTH: _health, ...env } = launch.env;
      const handle = workers.scale({ endpoint: spec.id, command: launch.command, env, cwd: launch.cwd, output: (line) => this.workerLine(line) });
      this.scaled.set(spec.id, { launch: key, stop: handle.stop });
    }
    for (const [id, entry] of this.scaled) {
      if (seen.has(id)) continue;
      this.scaled.delete(id);
      void entry.stop();
    }
  }

  /** A line a process wrote: minipod's output, and without the `[workerId] ` prefix, the worker's log. */
  private workerLine(line: string, workerId?: string): void {
    const { core } = this.d;
    this.d.output(line);
    const id = workerId ?? /^\[([^\]]+)\] /.exec(line)?.[1];
    if (id !== undefined) core.logs.append(workerLog(id), core.clock.now(), "container", line.slice(id.length + 3));
  }

  /** Processes of endpoints gone or changed are stopped; idle ones past idleTimeout too, down to workersMin. */
  private sweep(): void {
    this.sweepLoadBalancers();
    const { core } = this.d;
    for (const [endpointId, entry] of this.procs) {
      const spec = core.endpoints.spec(endpointId, "QUEUE");
      const launch = spec?.handler === EXTERNAL_HANDLER ? this.d.launchOf(endpointId) : undefined;
      if (!spec || !launch || JSON.stringify(launch) !== entry.launch) {
        this.stopAllOf(endpointId);
        continue;
      }
      const { jobs } = core.jobs.health(endpointId);
      if (jobs.inQueue + jobs.inProgress > 0) {
        this.busyAt.set(endpointId, core.clock.now());
        continue;
      }
      const idleMs = core.clock.now() - (this.busyAt.get(endpointId) ?? 0);
      if (idleMs < spec.idleTimeout * 1000) continue;
      const extra = [...entry.set].slice(spec.workersMin);
      for (const proc of extra) {
        entry.set.delete(proc);
        this.stopped.add(proc);
        void proc.stop();
      }
    }
  }

  private stopAllOf(endpointId: string): void {
    const entry = this.procs.get(endpointId);
    this.procs.delete(endpointId);
    this.busyAt.delete(endpointId);
    for (const proc of entry?.set ?? []) {
      this.stopped.add(proc);
      void proc.stop();
    }
  }

  /** Stops watching; the processes themselves are stopped with the emulator's others. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.unsubscribe();
  }
}
