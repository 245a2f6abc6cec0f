import type { GraphQLSchema } from "graphql";
import { getHeapStatistics } from "node:v8";
import type { FaultRuleSchema } from "../config/faults-schema.js";
import { atConfigField } from "../config/load.js";
import type { Config } from "../services/index.js";
import { openAiSettingsOf } from "../config/openai-schema.js";
import { workerSettings } from "../config/workers-schema.js";
import { VirtualClock } from "../domain/clock.js";
import { Deadlines } from "../domain/deadlines.js";
import { HELD_JOB_BYTES_LIMIT, HELD_JOB_HEAP_SHARE } from "../domain/bounds.js";
import { HandlerRegistry } from "../domain/handlers/registry.js";
import type { Handler } from "../domain/handlers/types.js";
import { newWorkerId } from "../domain/ids.js";
import type { Job } from "../domain/job.js";
import { JobService } from "../domain/jobs.js";
import { LoadBalancers } from "../domain/load-balancer/balancer.js";
import { Listeners } from "../domain/listeners.js";
import { LogBook } from "../domain/logbook.js";
import type { Logger } from "../domain/logger.js";
import type { EndpointSpec } from "../domain/endpoint.js";
import { EndpointRegistry } from "../domain/endpoint-registry.js";
import { JobNotifier } from "../domain/notifier.js";
import { OpenAiRequests } from "../domain/openai/requests.js";
import { RateLimits } from "../domain/rate-limit.js";
import { Scheduler } from "../domain/scheduler.js";
import { Transitions } from "../domain/transitions.js";
import { WorkerLogs } from "../domain/worker-logs.js";
import { WorkerProtocol } from "../domain/worker-protocol.js";
import type { WorkerEvent } from "../domain/simulated-workers.js";
import { ApiKeys } from "../http/auth.js";
import type { Core } from "../http/core.js";
import { FailureLog, isStorageFull } from "../http/problem.js";
import { ServicePaths } from "../http/surfaces.js";
import { SERVICES, type Services } from "../services/index.js";
import { assembleSchema } from "../services/shared/graphql.js";
import { endpointShown } from "../services/endpoints/index.js";
import { waitForJob } from "./wait-for-job.js";
import type { EngineView, ServiceDef, ViewContext } from "../services/shared/service.js";
import type { DocumentStore, StoredDocument } from "../services/shared/storage.js";
import { boundMemoryDb, openDb, type Db } from "../store/db.js";
import { documentsChanged, SqliteDocumentStore } from "../store/document-store.js";
import { SqliteJobStore } from "../store/job-store.js";
import { SqliteUsageStore } from "../store/usage-store.js";
import { SqlitePieceStore } from "../store/document-pieces.js";
import { WriteBehind } from "../store/write-behind.js";
import { BodyBudget } from "../http/body.js";
import { runPhases, type Participant } from "./lifecycle.js";
import { buildObserve } from "./observability.js";
import { importState, Snapshots } from "./snapshots.js";
import { WorkerConnections } from "../http/load-balancer/connections.js";

export interface RuntimeOptions {
  config: Config;
  /** How errors name the config (`config file /path`); default `config`. */
  configLabel?: string | undefined;
  baseDir: string;
  db: string;
  clock: VirtualClock;
  handlers: Record<string, Handler>;
  log: Logger;
  /** A state file (`minipod export`) loaded into the database before anything starts. */
  importFile?: string | undefined;
  /** The management services; default the list of src/services/index.ts. */
  services?: readonly ServiceDef[] | undefined;
  /** A fault rule as the config of these services has it (the control API's body). */
  faultRuleSchema: FaultRuleSchema;
}

export interface EmulatorRuntime extends Core {
  db: Db;
  notifier: JobNotifier;
  handlers: HandlerRegistry;
  /** Every service's models (network volumes, templates, endpoints, pods...). */
  services: Services;
  /** Pod and worker logs (in memory). */
  logs: LogBook;
  /** Jobs re-queued at start because they were running when the process stopped. */
  recovered: number;
  close(): void;
}

/**
 * Builds the emulator on its storage: the job engine, then each service of the list in order;
 * then starts it (seed, resume: see lifecycle.ts). Reset and snapshot restore run the same hooks.
 */
export async function buildRuntime(o: RuntimeOptions): Promise<EmulatorRuntime> {
  const { config } = o;
  const db = openDb(o.db);
  try {
    const memory = o.db === ":memory:";
    if (memory) boundMemoryDb(db, config.memory.databaseBytes);
    if (o.importFile !== undefined) await importState(o.importFile, db, memory ? config.memory.databaseBytes : undefined);
    return await assemble(o, db);
  } catch (e) {
    db.close();
    throw e;
  }
}

async function assemble(o: RuntimeOptions, db: Db): Promise<EmulatorRuntime> {
  const { clock, log, config } = o;
  const failures = new FailureLog(log, o.db === ":memory:" ? { memoryBytes: config.memory.databaseBytes } : { file: o.db });
  // One commit per turn of the event loop for the jobs, their timelines and the journal.
  const writes = new WriteBehind(db, (e) =>
    isStorageFull(e) ? failures.failed("(a write of", "the end of a turn)", e) : log.error(`could not write this turn's changes to the database: ${(e as Error).message}`),
  );
  // In memory, a new job's row waits there until something reads jobs with SQL (store/job-writes.ts).
  const memory = config.memory;
  const held = o.db === ":memory:" && memory.heldJobRows > 0 ? { rows: memory.heldJobRows, bytes: memory.heldJobBytes ?? heldBytesDefault(), idleMs: memory.heldJobIdleMs } : undefined;
  const jobStore = new SqliteJobStore(db, writes, held);
  // The endpoints are documents like every resource: measured against their former table (1,000
  // endpoints), listing them all at start-up, a get and a save took no longer as documents.
  const endpoints = new EndpointRegistry(new SqliteDocumentStore<EndpointSpec>(db, "endpoint"));
  const notifier = new JobNotifier();
  // A job that moves may change what waits on real time (a job queued for a worker process taken or gone).
  notifier.onAny(() => clock.activity.changed());
  const openAiSettings = openAiSettingsOf(config.endpoints);
  const handlers = new HandlerRegistry(o.baseDir, clock.wall, o.handlers, openAiSettings);
  let service: JobService | undefined;
  const deadlines = new Deadlines(clock, jobStore, (job: Job, now: number) => service!.onDeadline(job, now));
  const transitions = new Transitions(clock, jobStore, deadlines, notifier);
  // Built after the observers that read it lazily.
  let scheduler: Scheduler;
  const observed = buildObserve({ db, writes, clock, config, notifier, jobs: jobStore, log, scheduler: () => scheduler });
  const logs = new LogBook();
  const workerLogs = new WorkerLogs(logs, clock, (id) => endpoints.spec(id, "QUEUE")?.coldStartMs);
  const workerEvents = new Listeners<WorkerEvent>();
  workerEvents.subscribe((e) => workerLogs.onWorker(e));
  scheduler = new Scheduler({ clock, jobs: jobStore, endpoints, handlers, transitions, log, newWorkerId, faults: observed.schedulerFaults, workerObserver: (e) => workerEvents.emit(e), workerLogs });
  const workerProtocol = new WorkerProtocol({ clock, jobs: jobStore, scheduler, endpoints, transitions, settings: workerSettings(config.externalWorkers), log });
  scheduler.attachExternal(workerProtocol);
  const loadBalancers = new LoadBalancers({ clock, newWorkerId, endpoints });
  scheduler.attachLoadBalancers(loadBalancers);
  service = new JobService({ clock, jobs: jobStore, scheduler, endpoints, transitions, notifier, log, external: workerProtocol.workers });
  const jobs = service;
  const openai = new OpenAiRequests({ clock, jobs, store: jobStore, notifier });
  const auth = new ApiKeys(config.auth);
  const rateLimits = new RateLimits(clock, config.rateLimits);
  let recovered = 0;

  /** The job engine's part in start, reset and restore. */
  const engineHooks: Participant = {
    name: "engine",
    quiesce(cause) {
      scheduler.detachAll();
      workerProtocol.reset();
      notifier.releaseAll(cause, clock.now());
      clock.clearTimers();
    },
    clear() {
      jobStore.deleteAll();
      endpoints.stored.deleteAll();
      observed.observe.clearAll();
      rateLimits.reset();
      logs.clear();
      workerLogs.clear();
    },
    restored(at) {
      // The database holds the snapshot now: forget what was read of the old one.
      jobStore.forget();
      clock.set(at);
      rateLimits.reset();
      logs.clear();
      workerLogs.clear();
    },
    seed() {
      observed.faults.reset(config.faults);
    },
    async resume() {
      jobs.resync();
      recovered = jobs.recover();
      for (const spec of endpoints.stored.list()) scheduler.attach(spec, true);
      deadlines.rebuild();
      await clock.settle();
    },
  };

  // The services, in the list's order, each on the generic document store.
  const engine: EngineView = {
    clock,
    log,
    endpoints,
    jobs: jobStore,
    queue: jobs,
    webhooks: observed.webhooks,
    notifier,
    handlers,
    scheduler,
    workerProtocol,
    logs,
    onWorker: (fn) => void workerEvents.subscribe(fn),
  };
  const registry = {} as Services;
  const usageStore = new SqliteUsageStore(db, writes);
  const atField = atConfigField(o.configLabel ?? "config");
  const parts: Participant[] = [engineHooks];
  const defs: readonly ServiceDef[] = o.services ?? SERVICES;
  const built: Array<{ def: ServiceDef; models: object }> = [];
  for (const def of defs) {
    const opened: Array<DocumentStore<StoredDocument>> = [];
    const models = def.build({
      config,
      engine,
      documents: <T extends StoredDocument>(kind: string) => {
        const store = new SqliteDocumentStore<T>(db, kind);
        opened.push(store as unknown as DocumentStore<StoredDocument>);
        return store;
      },
      pieces: (kind) => new SqlitePieceStore(db, kind),
      usage: usageStore,
      services: registry,
    });
    Object.assign(registry, models);
    built.push({ def, models });
    parts.push({
      name: def.name,
      clear() {
        for (const store of opened) store.deleteAll();
        def.clear?.(models);
      },
      restored: (at) => def.restored?.(models, at),
      seed: () => def.seed?.(models, { config, atField, engine }),
      resume: () => def.resume?.(models),
    });
  }
  const views: ViewContext = Object.assign(Object.create(null) as object, registry, { clock, endpoints, notifier, logs });
  const paths = new ServicePaths(defs.flatMap((d) => d.collections.v2 ?? []));
  // Built on the first GraphQL request: most runs never make one.
  let schema: GraphQLSchema | undefined;

  await runPhases("start", parts);
  const startRecovered = recovered;

  const snapshots = new Snapshots(
    db,
    clock,
    (load, at) =>
      runPhases("restore", parts, {
        cause: "snapshot restored",
        at,
        afterQuiesce: async () => {
          try {
            await load();
          } finally {
            documentsChanged(db);
          }
        },
      }),
    () => writes.flush(true),
    config.snapshots,
    () => writes.hold(),
    () => writes.defer(),
  );

  // Connections to load-balancing workers: this emulator's own, ended as it closes.
  const workerConnections = new WorkerConnections();
  return {
    clock,
    jobs,
    scheduler,
    openai,
    loadBalancers,
    workerConnections,
    openAiSettings,
    log,
    failures,
    db,
    notifier,
    jobStore,
    endpoints,
    handlers,
    services: registry,
    logs,
    recovered: startRecovered,
    auth,
    rateLimits,
    paths,
    graphqlSchema: () => (schema ??= assembleSchema(defs, views)),
    endpointView: (id) => endpointShown(views, id),
    mountServices(app) {
      for (const { def } of built) def.routes?.(app, views);
    },
    workerProtocol,
    faults: observed.faults,
    faultRuleSchema: o.faultRuleSchema,
    observe: observed.observe,
    ownAddress: observed.ownAddress,
    journalMax: config.journal.maxEntries,
    journalBodyBytes: config.journal.maxBodyBytes,
    bodies: new BodyBudget(config.memory.requestBodyBytes),
    snapshots,
    runUntilIdle: observed.runUntilIdle,
    waitForJob: (endpointId, jobId, status, withinMs) => waitForJob({ clock, jobs, notifier }, endpointId, jobId, status, withinMs),
    async reset() {
      // A reset (over HTTP or of the emulator object) waits for a restore or a save under way, and
      // those asked while it runs wait for it.
      await snapshots.resetting(() => runPhases("reset", parts, { cause: "reset" }));
      log.info("reset: jobs emptied, endpoints back to the configuration");
    },
    close() {
      void workerConnections.close();
      workerProtocol.close();
      scheduler.detachAll();
      clock.stop();
      writes.flush();
      snapshots.close();
      db.close();
    },
  };
}

/** The bytes of job rows held in memory when the config does not say: a share of node's heap limit (`--max-old-space-size`). */
export function heldBytesDefault(): number {
  return Math.min(HELD_JOB_BYTES_LIMIT, Math.floor(getHeapStatistics().heap_size_limit * HELD_JOB_HEAP_SHARE));
}
