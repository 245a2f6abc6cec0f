import { atConfigField } from "./config/load.js";
import { INLINE_PREFIX } from "./config/inline-handlers.js";
import { type Config } from "./config/schema.js";
import { openAiSettingsOf } from "./config/openai-schema.js";
import { VirtualClock } from "./domain/clock.js";
import { Deadlines } from "./domain/deadlines.js";
import type { EndpointSpec } from "./domain/endpoint.js";
import { HandlerRegistry } from "./domain/handlers/registry.js";
import type { Handler } from "./domain/handlers/types.js";
import { newWorkerId } from "./domain/ids.js";
import type { Job } from "./domain/job.js";
import { JobService } from "./domain/jobs.js";
import { OpenAiRequests } from "./domain/openai/requests.js";
import type { Logger } from "./domain/logger.js";
import { JobNotifier } from "./domain/notifier.js";
import { LogBook } from "./domain/logbook.js";
import { WorkerLogs } from "./domain/worker-logs.js";
import type { WorkerEvent } from "./domain/workers.js";
import { RateLimits } from "./domain/rate-limit.js";
import { Scheduler } from "./domain/scheduler.js";
import { Transitions } from "./domain/transitions.js";
import { WorkerProtocol } from "./domain/worker-protocol.js";
import { workerSettings } from "./config/workers-schema.js";
import { ApiKeys } from "./http/auth.js";
import type { Core } from "./http/core.js";
import { buildManagement } from "./core-management.js";
import { buildPodsAndBilling } from "./core-pods.js";
import { externalWorkerReader } from "./core-external-workers.js";
import { UsageMeter } from "./domain/management/usage.js";
import { SqliteUsageStore } from "./store/usage-store.js";
import { buildObserve } from "./core-observe.js";
import { loadImage, Snapshots } from "./snapshots.js";
import { boundMemoryDb, openDb, type Db } from "./store/db.js";
import { isStorageFull, logFailure } from "./http/problem.js";
import { SqliteEndpointStore } from "./store/endpoint-store.js";
import { SqliteJobStore } from "./store/job-store.js";
import { WriteBehind } from "./store/write-behind.js";

export interface CoreOptions {
  config: Config;
  /** How errors name the config (`config file /path`); default `config`. */
  configLabel?: string | undefined;
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
  if (o.db === ":memory:") boundMemoryDb(db, config.memory.databaseBytes);
  // One commit per turn of the event loop for the jobs, their timelines and the journal.
  const writes = new WriteBehind(db, (e) =>
    isStorageFull(e) ? logFailure(log, "(a write of", "the end of a turn)", e) : log.error(`could not write this turn's changes to the database: ${(e as Error).message}`),
  );
  const jobStore = new SqliteJobStore(db, writes);
  const endpoints = new SqliteEndpointStore(db);
  const notifier = new JobNotifier();
  const handlers = new HandlerRegistry(o.baseDir, o.handlers, openAiSettingsOf(config.endpoints));
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
  const workerProtocol = new WorkerProtocol({ clock, jobs: jobStore, scheduler, transitions, settings: workerSettings(config.externalWorkers), log });
  scheduler.attachExternal(workerProtocol);
  service = new JobService({ clock, jobs: jobStore, scheduler, transitions, notifier, log, external: workerProtocol.workers });
  const jobs = service;
  const openai = new OpenAiRequests({ clock, jobs, store: jobStore, notifier });
  const management = buildManagement({ db, clock, config, handlers, runtime: scheduler, endpoints, jobs: jobStore, notifier });
  const { networkVolumes, templates } = management;
  const podsBilling = buildPodsAndBilling({ db, clock, config, log, usage, usageStore, networkVolumes, templates, endpointName: (id) => endpoints.get(id)?.name, logs });
  const auth = new ApiKeys(config.auth);
  const rateLimits = new RateLimits(clock, config.rateLimits);

  const atField = atConfigField(o.configLabel ?? "config");
  const seed = async () => {
    await management.seed(atField);
    podsBilling.seed(atField);
    const now = clock.now();
    for (const [i, e] of config.endpoints.entries()) {
      // A handler inherited from a template or defaultHandler was prepared, under its own field.
      await atField(`endpoints[${i}].handler`, () => handlers.prepare(e.handler));
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
    const configured = new Set(config.endpoints.map((e) => e.id));
    for (const spec of endpoints.list()) {
      if (!configured.has(spec.id)) await prepareStored(spec);
    }
  };

  /**
   * An endpoint of the database (made through the API, or imported) whose handler cannot be
   * prepared here does not stop the start: its jobs fail, saying why.
   */
  const prepareStored = async (spec: EndpointSpec) => {
    try {
      await handlers.prepare(spec.handler);
    } catch (e) {
      const name = typeof spec.handler === "string" ? spec.handler : spec.handler.url;
      const reason = name.startsWith(INLINE_PREFIX)
        ? `handler "${name}" of endpoint "${spec.id}" was a function given in code to the emulator that made this endpoint, and functions are not stored; give the endpoint a handler in the config, or pass one as createEmulator({ handlers: { "${name}": fn } })`
        : `handler "${name}" of endpoint "${spec.id}" cannot be used: ${(e as Error).message}`;
      handlers.unavailable(spec.handler, reason);
      log.warn(`${reason}; its jobs will fail until then`);
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
    workerProtocol.reset();
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
  }, () => writes.flush(true), config.snapshots);

  return {
    clock,
    jobs,
    scheduler,
    openai,
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
    externalWorkers: externalWorkerReader(workerProtocol),
    faults: observed.faults,
    observe: observed.observe,
    journalMax: config.journal.maxEntries,
    journalBodyBytes: config.journal.maxBodyBytes,
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
      workerProtocol.reset();
      await seed();
      jobs.resync();
      attachAll();
      deadlines.rebuild();
      await clock.settle();
      log.info("reset: jobs emptied, endpoints back to the configuration");
    },
    close() {
      workerProtocol.close();
      scheduler.detachAll();
      clock.stop();
      writes.flush();
      db.close();
    },
  };
}
