import { type Config } from "./config/schema.js";
import { VirtualClock } from "./domain/clock.js";
import { Deadlines } from "./domain/deadlines.js";
import type { EndpointSpec } from "./domain/endpoint.js";
import { HandlerRegistry } from "./domain/handlers/registry.js";
import type { Handler } from "./domain/handlers/types.js";
import { newWorkerId } from "./domain/ids.js";
import type { Job } from "./domain/job.js";
import { JobService } from "./domain/jobs.js";
import type { Logger } from "./domain/logger.js";
import { JobNotifier } from "./domain/notifier.js";
import { LogBook } from "./domain/logbook.js";
import { WorkerLogs } from "./domain/worker-logs.js";
import type { WorkerEvent } from "./domain/workers.js";
import { RateLimits } from "./domain/rate-limit.js";
import { Scheduler } from "./domain/scheduler.js";
import { Transitions } from "./domain/transitions.js";
import { WorkerProtocol } from "./domain/worker-protocol.js";
import { ApiKeys } from "./http/auth.js";
import type { Core } from "./http/core.js";
import { buildManagement } from "./core-management.js";
import { buildPodsAndBilling } from "./core-pods.js";
import { externalWorkerReader } from "./core-external-workers.js";
import { UsageMeter } from "./domain/management/usage.js";
import { SqliteUsageStore } from "./store/usage-store.js";
import { buildObserve } from "./core-observe.js";
import { loadImage, Snapshots } from "./snapshots.js";
import { openDb, type Db } from "./store/db.js";
import { SqliteEndpointStore } from "./store/endpoint-store.js";
import { SqliteJobStore } from "./store/job-store.js";
import { WriteBehind } from "./store/write-behind.js";

export interface CoreOptions {
  config: Config;
  baseDir: string;
  db: string;
  clock: VirtualClock;
  handlers: Record<string, Handler>;
  log: Logger;
  /** A state file (`minipod export`) loaded into the database before anything starts. */
  importImage?: Buffer | undefined;
}

export interface EmulatorCore extends Core {
  db: Db;
  notifier: JobNotifier;
  endpoints: SqliteEndpointStore;
  handlers: HandlerRegistry;
  /** Jobs re-queued at start because they were running when the process stopped. */
  recovered: number;
  close(): void;
}

/** Builds the domain on its storage: config → store → clock → domain. */
export async function buildCore(o: CoreOptions): Promise<EmulatorCore> {
  const { clock, log, config } = o;
  const db = openDb(o.db);
  if (o.importImage) {
    try {
      loadImage(o.importImage, db);
    } catch (e) {
      db.close();
      throw e;
    }
  }
  // One commit per turn of the event loop for the jobs, their timelines and the journal.
  const writes = new WriteBehind(db, (e) => log.error(`could not write this turn's changes to the database: ${(e as Error).message}`));
  const jobStore = new SqliteJobStore(db, writes);
  const endpoints = new SqliteEndpointStore(db);
  const notifier = new JobNotifier();
  const handlers = new HandlerRegistry(o.baseDir, o.handlers);
  let service: JobService | undefined;
  const deadlines = new Deadlines(clock, jobStore, (job: Job, now: number) => service!.onDeadline(job, now));
  const transitions = new Transitions(clock, jobStore, deadlines, notifier);
  // eslint-disable-next-line prefer-const -- built after the observers that read it lazily
  let scheduler: Scheduler;
  const usageStore = new SqliteUsageStore(db, writes);
  const usage = new UsageMeter({ store: usageStore, endpointOf: (id) => scheduler.spec(id) ?? endpoints.get(id), log });
  const observed = buildObserve({ db, writes, clock, config, notifier, jobs: jobStore, log, scheduler: () => scheduler });
  const logs = new LogBook();
  const workerLogs = new WorkerLogs(logs, clock, (id) => scheduler.spec(id)?.coldStartMs);
  const workerObserver = (e: WorkerEvent) => {
    usage.onWorker(e);
    workerLogs.onWorker(e);
  };
  scheduler = new Scheduler({ clock, jobs: jobStore, handlers, transitions, log, newWorkerId, faults: observed.schedulerFaults, workerObserver, workerLogs });
  const workerProtocol = new WorkerProtocol({ clock, jobs: jobStore, scheduler, transitions });
  service = new JobService({ clock, jobs: jobStore, scheduler, transitions, notifier, log, external: workerProtocol.workers });
  const jobs = service;
  const management = buildManagement({ db, clock, config, handlers, runtime: scheduler, endpoints, jobs: jobStore, notifier });
  const { networkVolumes, templates } = management;
  const podsBilling = buildPodsAndBilling({ db, clock, config, log, usage, usageStore, networkVolumes, templates, endpointName: (id) => endpoints.get(id)?.name, logs });
  const auth = new ApiKeys(config.auth);
  const rateLimits = new RateLimits(clock, config.rateLimits);

  const seed = async () => {
    await management.seed();
    podsBilling.seed();
    const now = clock.now();
    for (const e of config.endpoints) {
      await handlers.prepare(e.handler);
      const existing = endpoints.get(e.id);
      const spec: EndpointSpec = {
        id: e.id,
        name: e.name ?? e.id,
        handler: e.handler,
        workersMin: e.workersMin,
        workersMax: e.workersMax,
        idleTimeout: e.idleTimeout,
        coldStartMs: e.coldStartMs,
        executionTimeoutMs: e.executionTimeoutMs,
        createdAt: existing?.createdAt ?? now,
        extra: management.endpointManager.configExtra(e, existing),
      };
      endpoints.upsert(spec);
    }
    for (const spec of endpoints.list()) {
      await handlers.prepare(spec.handler);
    }
  };

  const attachAll = () => {
    for (const spec of endpoints.list()) scheduler.attach(spec, true);
  };

  try {
    await seed();
  } catch (e) {
    db.close();
    throw e;
  }
  const recovered = jobs.recover();
  attachAll();
  deadlines.rebuild();
  observed.faults.reset(config.faults);

  const snapshots = new Snapshots(db, clock, async (at) => {
    // The database now holds the snapshot: rebuild timers, workers and queue positions from it.
    jobStore.forget();
    scheduler.detachAll();
    notifier.releaseAll("snapshot restored", clock.now());
    clock.clearTimers();
    clock.set(at);
    rateLimits.reset();
    jobs.resync();
    jobs.recover();
    usage.restoredAt(at);
    attachAll();
    deadlines.rebuild();
    await clock.settle();
  }, () => writes.flush(true));

  return {
    clock,
    jobs,
    scheduler,
    log,
    db,
    notifier,
    jobStore,
    endpoints,
    handlers,
    recovered,
    networkVolumes: management.networkVolumes,
    templates: management.templates,
    endpointManager: management.endpointManager,
    pods: podsBilling.pods,
    sshKeys: podsBilling.sshKeys,
    clusters: podsBilling.clusters,
    delegations: podsBilling.delegations,
    logs,
    registryAuths: podsBilling.registryAuths,
    billing: podsBilling.billing,
    prices: podsBilling.prices,
    auth,
    rateLimits,
    workerProtocol,
    externalWorkers: externalWorkerReader(workerProtocol, jobStore),
    faults: observed.faults,
    observe: observed.observe,
    journalMax: config.journal.maxEntries,
    snapshots,
    runUntilIdle: observed.runUntilIdle,
    async reset() {
      scheduler.detachAll();
      notifier.releaseAll("reset", clock.now());
      clock.clearTimers();
      jobStore.deleteAll();
      rateLimits.reset();
      endpoints.deleteAll();
      management.clear();
      podsBilling.clear();
      observed.reset();
      logs.clear();
      workerLogs.clear();
      workerProtocol.workers.forget();
      await seed();
      jobs.resync();
      attachAll();
      deadlines.rebuild();
      await clock.settle();
      log.info("reset: jobs emptied, endpoints back to the configuration");
    },
    close() {
      scheduler.detachAll();
      clock.stop();
      writes.flush();
      db.close();
    },
  };
}
