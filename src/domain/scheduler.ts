import type { TimerHandle, VirtualClock } from "./clock.js";
import { jsonText, RawJson } from "./json-text.js";
import { parseInSlices, SLICE } from "./json-slices.js";
import { withStaged } from "./payload-staging.js";
import { RunStop } from "./run-stop.js";
import { batchSpecOf, isLoadBalancer, type EndpointSpec } from "./endpoint.js";
import type { EndpointRegistry } from "./endpoint-registry.js";
import type { LoadBalancers } from "./load-balancer/balancer.js";
import type { HandlerRegistry } from "./handlers/registry.js";
import { readsInputOnly } from "./handlers/types.js";
import { errorMessage, runHandler, type RunOutcome } from "./handlers/run.js";
import type { Fault } from "./faults.js";
import { laneOf, type Job, type Lane } from "./job.js";
import { requeueLostJob } from "./lost-jobs.js";
import type { Logger } from "./logger.js";
import type { JobStore } from "./ports.js";
import { splitStreamOutput } from "./stream-chunks.js";
import type { Transitions } from "./transitions.js";
import { WorkerPool, type PoolLinks, type SimWorker, type WorkerObserver } from "./simulated-workers.js";
import { RunContext, type RunHooks, type WorkerLogSink } from "./run-context.js";
import type { WorkerLogs } from "./worker-logs.js";

/** What a run reads of its scheduler: the clock, the writer of job state, and whether the run is still the job's. */
interface RunOwner {
  clock: VirtualClock;
  transitions: Transitions;
  live(run: Run): boolean;
}

/**
 * One job running on a simulated worker: what stops it, its hold on the clock, and what its
 * handler calls back (sleep, progress, stream chunks) as methods, so a job's run makes no
 * closures of its own (its context makes them only when a handler reads them).
 */
class Run implements RunHooks {
  readonly stop: RunStop;
  readonly hold: HoldSlot;
  /** A worker-crash fault: the rule id, and when the crash comes (a timer, or at the handler's end). */
  crash?: { ruleId: string; timer: TimerHandle | undefined };

  constructor(
    readonly jobId: string,
    readonly endpointId: string,
    readonly lane: Lane,
    readonly workerId: string,
    private readonly owner: RunOwner,
  ) {
    this.stop = new RunStop(owner.clock);
    this.hold = new HoldSlot(owner.clock);
  }

  /** The handler's sleep, on the virtual clock: the clock is not held meanwhile. */
  async sleep(ms: number): Promise<void> {
    this.hold.drop();
    try {
      await this.stop.sleep(ms);
    } finally {
      this.hold.take();
    }
  }

  progress(output: unknown): void {
    if (this.owner.live(this)) this.owner.transitions.progress(this.jobId, output);
  }

  chunk(output: unknown): void {
    if (this.owner.live(this)) this.owner.transitions.appendChunks(this.jobId, splitStreamOutput(output));
  }
}

/** Job-level fault injection, as the scheduler sees it. */
export interface SchedulerFaults {
  /** The `worker-crash` or `timeout` rule that fires as this job starts, if any. */
  atStart(job: Job): { id: string; fault: Fault } | undefined;
  /** Whether the endpoint has no capacity (a `no-workers` rule). */
  blocksWorkers(endpointId: string): boolean;
}

/** Worker processes of "external" endpoints, as the scheduler tells them what happens to their jobs. */
export interface ExternalRuns {
  /** Jobs (or capacity) arrived on an external endpoint. */
  wake(endpointId: string): void;
  /** A job minipod stops (cancel, timeout, expiry) may be running on a worker process. */
  stopJob(jobId: string): void;
  /** The endpoint stops being served. */
  detach(endpointId: string): void;
}

/**
 * Decides what runs next, in one place: matches queued jobs (FIFO) to idle simulated workers,
 * scales the pools, runs handlers and records their outcome. Routes never move a job themselves.
 *
 * Each endpoint has two pools: its standard workers take `/run` traffic, its batch workers take
 * batch requests only (sized by `batchWorkersMax`, none kept warm), so a batch of thousands never
 * delays an interactive request.
 */
export class Scheduler {
  private readonly pools = new Map<string, WorkerPool>();
  private readonly batchPools = new Map<string, WorkerPool>();
  private readonly runs = new Map<string, Run>();
  private external: ExternalRuns | undefined;
  private loadBalancers: LoadBalancers | undefined;
  /** The next turn of the event loop, between slices of a large input or output. */
  private readonly pause = () => this.d.clock.wall.turn();
  private readonly now = () => this.d.clock.wall.now();
  /** The virtual time handlers read (`ctx.now`), one function for every run. */
  private readonly virtualNow = () => this.d.clock.now();
  private readonly owner: RunOwner;

  constructor(
    private readonly d: {
      clock: VirtualClock;
      jobs: JobStore;
      handlers: HandlerRegistry;
      transitions: Transitions;
      log: Logger;
      newWorkerId: () => string;
      /** Told when workers start, change state and stop (usage metering). */
      workerObserver?: WorkerObserver;
      faults?: SchedulerFaults;
      /** Where each worker's jobs and its handlers' `ctx.log` lines go (its log). */
      workerLogs?: WorkerLogSink & Pick<WorkerLogs, "job">;
      /** The endpoints: the scheduler tells it which queue endpoints it serves. */
      endpoints: EndpointRegistry;
    },
  ) {
    this.owner = { clock: d.clock, transitions: d.transitions, live: (run) => this.runs.get(run.jobId) === run };
  }

  /** The worker side of "external" endpoints (made after the scheduler, which it needs). */
  attachExternal(external: ExternalRuns): void {
    this.external = external;
  }

  /**
   * Load-balancing endpoints: attached, updated and detached here like queue endpoints, and served
   * there (they have no queue).
   */
  attachLoadBalancers(loadBalancers: LoadBalancers): void {
    this.loadBalancers = loadBalancers;
  }

  pool(endpointId: string): WorkerPool | undefined {
    return this.pools.get(endpointId);
  }

  /** The endpoint's batch workers. */
  batchPool(endpointId: string): WorkerPool | undefined {
    return this.batchPools.get(endpointId);
  }

  /** Idle timers of running workers, kept armed through their jobs (see `WorkerPool.keptIdleTimers`): inert while they run. */
  keptIdleTimers(): number {
    let n = 0;
    for (const pools of [this.pools, this.batchPools]) for (const pool of pools.values()) n += pool.keptIdleTimers();
    return n;
  }

  private poolOf(endpointId: string, lane: Lane): WorkerPool | undefined {
    return (lane === "batch" ? this.batchPools : this.pools).get(endpointId);
  }

  /** Starts serving an endpoint; `warm` starts its minimum workers ready. */
  attach(spec: EndpointSpec, warm: boolean): void {
    this.detach(spec.id);
    if (isLoadBalancer(spec)) return this.loadBalancers?.attach(spec, warm);
    const links = (lane: Lane): PoolLinks => ({ queue: this.d.jobs, lane, start: (job, worker, s) => this.start(job, worker, s), onReady: () => this.pump(spec.id) });
    const pool = new WorkerPool(spec, this.d.clock, this.d.newWorkerId, links("standard"), this.d.workerObserver);
    this.pools.set(spec.id, pool);
    this.d.endpoints.serve(spec);
    this.batchPools.set(spec.id, new WorkerPool(batchSpecOf(spec), this.d.clock, this.d.newWorkerId, links("batch"), this.d.workerObserver));
    pool.fillMinimum(warm);
    this.pump(spec.id);
  }

  /** New endpoint settings take effect on its workers at once. */
  update(spec: EndpointSpec): void {
    if (isLoadBalancer(spec)) return this.loadBalancers?.update(spec);
    const pool = this.pools.get(spec.id);
    if (!pool) return this.attach(spec, false);
    pool.update(spec);
    this.d.endpoints.serve(spec);
    this.batchPools.get(spec.id)?.update(batchSpecOf(spec));
    this.pump(spec.id);
  }

  /** Stops serving an endpoint: its running handlers are aborted, its workers gone. */
  detach(endpointId: string): void {
    this.loadBalancers?.detach(endpointId);
    const pool = this.pools.get(endpointId);
    if (!pool) return;
    for (const run of [...this.runs.values()]) if (run.endpointId === endpointId) this.stopRun(run.jobId, "endpoint deleted");
    pool.stopAll();
    this.batchPools.get(endpointId)?.stopAll();
    this.pools.delete(endpointId);
    this.batchPools.delete(endpointId);
    this.d.endpoints.retire(endpointId);
    if (pool.external) this.external?.detach(endpointId);
  }

  detachAll(): void {
    this.loadBalancers?.detachAll();
    for (const id of [...this.pools.keys()]) this.detach(id);
  }

  /** Re-reads which endpoints have no capacity (after fault rules changed) and acts on it. */
  refreshCapacity(): void {
    for (const id of [...this.pools.keys()]) this.pump(id);
  }

  /**
   * Asks the endpoint's pools to decide (see `WorkerPool.dispatch`): each gives its idle workers
   * the oldest jobs of its lane, through `start`, and scales for what still waits.
   */
  pump(endpointId: string): void {
    const pool = this.pools.get(endpointId);
    if (!pool) return;
    const blocked = this.d.faults?.blocksWorkers(endpointId) ?? false;
    if (!pool.dispatch(blocked)) return this.external?.wake(endpointId);
    this.batchPools.get(endpointId)?.dispatch(blocked);
  }

  isRunning(jobId: string): boolean {
    return this.runs.has(jobId);
  }

  /**
   * Stops a job's handler (cancel, timeout, expiry): its signal aborts, its worker is free at
   * once. What the handler does afterwards is ignored.
   */
  stopRun(jobId: string, reason: string): void {
    const run = this.runs.get(jobId);
    if (!run) return this.external?.stopJob(jobId);
    this.runs.delete(jobId);
    this.d.clock.cancel(run.crash?.timer);
    run.hold.close();
    run.stop.stop(abortReason(reason));
    this.d.workerLogs?.write(run.workerId, "container", `job ${jobId} stopped: ${reason}`);
    this.poolOf(run.endpointId, run.lane)?.release(run.workerId, "idle");
  }

  /** Runs a job the pool matched with `worker` (running it already): IN_PROGRESS, then its handler. */
  private start(job: Job, worker: SimWorker, spec: EndpointSpec): void {
    const { clock, transitions } = this.d;
    const now = clock.now();
    const started = transitions.move(
      job,
      {
        status: "IN_PROGRESS",
        startedAt: now,
        workerId: worker.id,
        attempt: job.attempt + 1,
        timeoutAt: now + job.executionTimeoutMs,
        output: undefined,
        error: undefined,
      },
      worker.startCause,
    );
    this.d.workerLogs?.job(worker.id, "started", job.id, started.attempt);
    const run = new Run(job.id, job.endpointId, laneOf(job), worker.id, this.owner);
    const { stop, hold } = run;
    this.runs.set(job.id, run);

    const rule = this.d.faults?.atStart(started);
    if (rule?.fault.type === "timeout") {
      // The handler never answers: the job stays IN_PROGRESS until its execution timeout.
      hold.close();
      transitions.note(started, `fault ${rule.id} fired: timeout (the handler hangs until the execution timeout)`);
      return;
    }
    if (rule?.fault.type === "worker-crash") {
      const atMs = rule.fault.atMs;
      run.crash = { ruleId: rule.id, timer: atMs === undefined ? undefined : clock.after(atMs, () => this.crash(run), "worker-crash") };
      transitions.note(started, `fault ${rule.id} fired: worker ${worker.id} will crash ${atMs === undefined ? "before reporting its result" : `${atMs} ms into the job`}`);
    }

    let handler;
    try {
      handler = this.d.handlers.resolve(spec.handler);
    } catch (e) {
      hold.close();
      this.finish(run, { ok: false, error: errorMessage(e) });
      return;
    }
    const ctx = new RunContext(started, stop, this.virtualNow, run, this.d.workerLogs, worker.id);
    // The handler gets its own copy of the input (the store's is what a retry runs again): a JSON
    // round trip, a fraction of structuredClone's time (a large input's text is made once, for this
    // and its row; parsed a slice at a time, json-slices.ts). One that only reads it (echo) gets
    // the stored one itself, unless that is kept as its text (RawJson).
    const shared = readsInputOnly(handler) && !(job.input instanceof RawJson);
    const text = shared ? "" : jsonText(job.input);
    const sliced = text.length > SLICE ? parseInSlices(text, { pause: this.pause, now: this.now }) : undefined;
    const input = (shared ? job.input : (sliced ?? JSON.parse(text))) as Record<string, unknown> | Promise<Record<string, unknown>>;
    void runHandler(handler, input, ctx, run, this.pause, this.now, shared).then((outcome) => {
      const done = (o: RunOutcome) => {
        hold.close();
        this.finish(run, o);
      };
      // A large output is written to the store first, over a few turns (see JobStore.stagePayload).
      const staged = outcome.ok ? withStaged(this.d.jobs, outcome, "output") : outcome;
      if (!(staged instanceof Promise)) return done(staged);
      staged.then(
        (o) => {
          done(o);
          if (o.ok && this.d.jobs.get(job.id)?.output !== o.output) this.d.jobs.releasePayload?.(o.output);
        },
        (e: unknown) => done({ ok: false, error: `the handler's output could not be stored: ${errorMessage(e)}` }),
      );
    });
  }

  /**
   * The worker dies mid-job: it is gone, and the job is lost with it (`requeueLostJob`: back at
   * its place in the queue, one more retry, or FAILED once it has gone back too often); another
   * worker picks it up.
   */
  private crash(run: Run): void {
    if (this.runs.get(run.jobId) !== run) return;
    this.runs.delete(run.jobId);
    this.d.clock.cancel(run.crash?.timer);
    run.hold.close();
    run.stop.stop(abortReason("worker crashed"));
    this.poolOf(run.endpointId, run.lane)?.release(run.workerId, "gone");
    const job = this.d.jobs.get(run.jobId);
    let after = "the job was no longer running";
    if (job && job.status === "IN_PROGRESS") {
      const next = requeueLostJob(this.d, job, `worker ${run.workerId} crashed (fault ${run.crash?.ruleId})`, this.d.clock.now());
      after = next.status === "IN_QUEUE" ? "the job goes back to the queue" : `the job fails: ${next.error}`;
    }
    this.d.workerLogs?.write(run.workerId, "system", `worker crashed running job ${run.jobId} (fault ${run.crash?.ruleId}); ${after}`);
    this.pump(run.endpointId);
  }

  private finish(run: Run, outcome: RunOutcome): void {
    if (this.runs.get(run.jobId) !== run) return; // cancelled, timed out or expired meanwhile
    if (run.crash) return this.crash(run);
    this.runs.delete(run.jobId);
    const job = this.d.jobs.get(run.jobId);
    if (job && job.status === "IN_PROGRESS") {
      const now = this.d.clock.now();
      if (outcome.ok) {
        this.d.transitions.finish(job, { status: "COMPLETED", output: outcome.output, error: undefined }, now, "handler returned");
      } else {
        this.d.transitions.finish(job, { status: "FAILED", output: undefined, error: outcome.error }, now, `handler failed: ${outcome.error}`);
      }
      if (outcome.ok) this.d.workerLogs?.job(run.workerId, "completed", run.jobId, now - (job.startedAt ?? now));
      else this.d.workerLogs?.write(run.workerId, "container", `job ${run.jobId} failed: ${outcome.error}`);
    }
    this.poolOf(run.endpointId, run.lane)?.release(run.workerId, "idle");
    this.pump(run.endpointId);
  }
}

/**
 * Why a handler's signal aborted: one plain Error per message, made once, without a stack (it
 * would only show the scheduler). Making one per stop was most of the cost of stopping thousands
 * of jobs in one advance.
 */
const abortReasons = new Map<string, Error>();
function abortReason(message: string): Error {
  let reason = abortReasons.get(message);
  if (!reason) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      reason = new Error(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
    if (abortReasons.size < 100) abortReasons.set(message, reason);
  }
  return reason;
}

/**
 * Tells the clock that handler code is running, except while it sleeps on the virtual clock, so
 * `advance` waits for a handler's real work but not for its virtual sleeps. Closed when the
 * handler ends or is abandoned (cancel, timeout), after which it holds nothing.
 */
class HoldSlot {
  private release: (() => void) | undefined;
  private closed = false;
  constructor(private readonly clock: VirtualClock) {
    this.take();
  }
  take(): void {
    if (!this.release && !this.closed) this.release = this.clock.hold();
  }
  drop(): void {
    this.release?.();
    this.release = undefined;
  }
  close(): void {
    this.closed = true;
    this.drop();
  }
}
