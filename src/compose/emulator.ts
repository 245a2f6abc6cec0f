import { accessSync, constants } from "node:fs";
import { createServer, type Server } from "node:http";

/** How long an idle keep-alive connection stays open: past every common client's idle pool timeout. */
export const SERVER_KEEP_ALIVE_MS = 75_000;
import type { AddressInfo } from "node:net";
import { checkClockOption, checkPortOption, ConfigError, inlineSource, readConfigFile, type LoadedConfig } from "../config/load.js";
import { configFor } from "./config.js";
import { withEveryHandlerProblem } from "./config-problems.js";
import { parseFaultRule } from "../config/faults-schema.js";
import type { Config, FaultRuleInput } from "../services/index.js";
import { extractInlineHandlers, type EmulatorConfig, type InlineHandler } from "./inline-handlers.js";
import { buildRuntime, type EmulatorRuntime } from "./runtime.js";
import { clientSleep } from "../domain/client-sleep.js";
import { VirtualClock, type ClockMode } from "../domain/clock.js";
import type { WallTime } from "../domain/wall.js";
import { wallOf } from "./process-wall.js";
import type { EndpointSpec } from "../domain/endpoint.js";
import type { Handler } from "../domain/handlers/types.js";
import { createLogger, type Logger, type LogLevel } from "../domain/logger.js";
import { createApp } from "../http/app.js";
import { requestPipeline, servePlain } from "../http/pipeline.js";
import { HealthPoller } from "../http/load-balancer/health-poller.js";
import { exposureWarnings } from "./exposure.js";
import { AllowedHostsSchema } from "../config/security-schema.js";
import { VERSION } from "../version.js";
import type { FaultRule } from "../domain/faults.js";
import type { JobStatus, JobView } from "../domain/job.js";
import type { JobEvent, JournalEntry, JournalFilter, WebhookDelivery } from "../domain/observability.js";
import type { SnapshotInfo } from "./snapshots.js";
import { EmulatorWorkers, type WorkerSpec } from "../launch/launched-workers.js";
import { ImageWorkers } from "../launch/image-workers.js";
import { imageLauncher } from "./image-launch.js";
import { CLOSING_CAUSE, RESTARTING_CAUSE } from "../domain/notifier.js";
import type { ServiceDef } from "../services/shared/service.js";
import type { WorkerProcess } from "../launch/worker-process.js";
import { serveTls } from "./tls-port.js";

export interface EmulatorOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /**
   * Host names answered besides the bound address, localhost, 127.0.0.1 and [::1] (added to the
   * config's `allowedHosts`; "all" turns the check off). Checked on the socket only: `app.request`
   * is not reachable from a browser.
   */
  allowedHosts?: string[] | "all";
  /**
   * Clock mode, or mode with speed and start; overrides the config's `clock`. Default: the
   * config's mode, else `auto` (time follows the wall, and skips to the next timer whenever
   * something waits on virtual time and nothing runs on real time; see docs/control-api.md).
   * `wall` replaces wall time where minipod uses it (worker processes' held polls and heartbeat
   * deadlines, and what real and auto time follow), so a test can make a worker go silent
   * without waiting.
   */
  clock?: ClockMode | { mode?: ClockMode; speed?: number; start?: number | string; wall?: WallTime };
  /**
   * A config object, or the path of a JSON config file. In an object, an endpoint's or a
   * template's `handler` (and `defaultHandler`) may be a function or an async generator function.
   */
  config?: EmulatorConfig | string;
  /** SQLite file; default in memory. */
  db?: string;
  /** A state file written by `minipod export`, loaded before the emulator starts. */
  importFile?: string;
  /** Handlers by name, usable as an endpoint's `handler`. */
  handlers?: Record<string, InlineHandler>;
  /** Log level (default: the config's, or "silent" for the programmatic API) or a line sink. */
  logLevel?: LogLevel;
  log?: (line: string) => void;
  /** Worker processes to start once listening (the service's worker runtime, for "external" endpoints); stopped by `close()`. */
  workers?: WorkerSpec[];
  /**
   * TLS on the same port (default on): a connection that opens with a TLS handshake is served
   * over TLS with a certificate of minipod's local authority, kept in `dir` (default
   * MINIPOD_TLS_DIR, else ~/.local/share/minipod/tls); `false` serves plain HTTP alone.
   */
  tls?: boolean | { dir?: string };
}

export interface EmulatorClock {
  readonly mode: ClockMode;
  now(): number;
  /** Moves virtual time forward by `ms`, running everything due, and resolves once it settled. */
  advance(ms: number): Promise<void>;
  /**
   * A client's sleep on the virtual clock: resolves once `ms` of virtual time has passed (on the auto
   * clock at once while nothing runs on real time), with the time then. Give it to the client under
   * test in place of its own sleep (`POST /_emulator/clock/sleep` from another process).
   */
  sleep(ms: number): Promise<number>;
}

export interface Emulator {
  /** Base URL, e.g. http://127.0.0.1:53121 (queue operations under `${url}/v2`). */
  url: string;
  port: number;
  host: string;
  clock: EmulatorClock;
  /** The resolved configuration. */
  config: Config;
  /** Jobs re-queued at start because they were running when the previous process stopped. */
  recovered: number;
  /** What start-up warned about (also logged at warn): listening beyond loopback without API keys or controlKey. */
  warnings: string[];
  /**
   * TLS on the same port, when on: the certificate file of minipod's local authority, which a
   * client trusts to call `https://` URLs of minipod (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`).
   */
  tls: { caFile: string } | undefined;
  /** The endpoints being served. */
  endpoints(): EndpointSpec[];
  /** Fault rules: add (answers the rule with its id), list, remove one, clear all. */
  faults: {
    add(rule: FaultRuleInput): FaultRule;
    list(): FaultRule[];
    remove(id: string): boolean;
    clear(): number;
  };
  /** Every webhook attempt (of one job, or all), oldest first. */
  webhooks(jobId?: string): WebhookDelivery[];
  /** The request journal, filtered, with the count of every match. */
  requests(filter?: JournalFilter): { requests: JournalEntry[]; count: number };
  /** A job's timeline: every transition with its virtual time and cause. */
  events(jobId: string): JobEvent[];
  /**
   * Saves the whole state under a name (in memory), in one turn of the event loop: it holds the
   * loop 0.3 to 0.5 s of CPU for a 300 MB database (bench/RESULTS-restore.md). `saveSnapshot` does
   * the same by turns.
   */
  snapshot(name: string): SnapshotInfo;
  /**
   * Saves the whole state under a name (in memory) by turns of about 10 ms, as the control API does:
   * requests made meanwhile wait for it, and it replaces a snapshot of that name only once whole.
   */
  saveSnapshot(name: string): Promise<SnapshotInfo>;
  /** Puts a saved state back, clock included. */
  restore(name: string): Promise<SnapshotInfo>;
  /** Deletes a snapshot, freeing its memory; false when there is none of that name. */
  deleteSnapshot(name: string): boolean;
  /**
   * Resolves when the job reaches `status`, within `withinMs` virtual ms (default 1 hour); rejects
   * if it ends otherwise. On the manual clock it moves time timer by timer; on the auto clock time
   * skips ahead by itself while it waits; on both, never while real work runs (a handler
   * computing, a job on a worker process), whose end it waits for instead.
   */
  waitForJob(endpointId: string, jobId: string, status: JobStatus, withinMs?: number): Promise<JobView>;
  /**
   * Moves time timer by timer until no job waits or runs and no webhook retry is due (at most
   * `maxMs`, default 7 days), waiting for real work (a job on a worker process) rather than
   * moving time past it.
   */
  runUntilIdle(maxMs?: number): Promise<void>;
  /**
   * Loads every handler module again, with what it imports (what `minipod --watch` does on an
   * edit): jobs starting from now run the new code, running ones finish on the code they started
   * with; a module that fails to load keeps its previous handler and is listed in `failed`.
   */
  reloadHandlers(): Promise<{ reloaded: string[]; failed: Array<{ handler: string; error: string }> }>;
  /** Empties jobs and returns to the configured state. */
  reset(): Promise<void>;
  /**
   * Starts a worker process for an "external" endpoint, with every RUNPOD_* variable the service's
   * worker library reads (what `minipod worker` does); `close()` stops it.
   */
  startWorker(spec: WorkerSpec): WorkerProcess;
  /**
   * Worker processes of a load-balancing `external` endpoint, started and stopped as its pool
   * scales (REQUEST_COUNT, workersMin..workersMax, idleTimeout); `stop()` ends them, as `close()` does.
   */
  scaleWorkers(spec: WorkerSpec): { stop(): Promise<void> };
  /**
   * Stops the worker processes it started, then the server, and closes the database. `restarting`:
   * it starts again on the same port at once (the feed's last `resync` says so, and `minipod
   * worker` keeps its workers for the new one).
   */
  close(options?: { restarting?: boolean }): Promise<void>;
  /** The Hono app, for in-process requests (`app.request(...)`). */
  app: { request: (input: string | Request, init?: RequestInit) => Response | Promise<Response>; fetch: (req: Request) => Response | Promise<Response> };
}

/** The `allowedHosts` option checked, as a function adding it to the config's. */
function mergeAllowedHosts(option: EmulatorOptions["allowedHosts"]): (configured: readonly string[] | "all") => readonly string[] | "all" {
  if (option === undefined) return (configured) => configured;
  const parsed = AllowedHostsSchema.safeParse(option);
  if (!parsed.success) throw new ConfigError(`allowedHosts: ${parsed.error.issues.map((i) => `${i.path.length ? `[${i.path.join(".")}] ` : ""}${i.message}`).join("; ")}`);
  const extra = parsed.data;
  return (configured) => (extra === "all" || configured === "all" ? "all" : [...configured, ...extra]);
}

function checkStateFile(file: string): void {
  try {
    accessSync(file, constants.R_OK);
  } catch (e) {
    throw new ConfigError(`cannot read state file ${file} for --import: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}`);
  }
}

/** Largest request head node accepts (431 beyond, before any parsing); node's default, made explicit. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Builds the emulator without listening: for in-process tests through `app.request`. `services`
 * replaces the list of management services (src/services/index.ts), for tests of the list itself.
 */
export async function buildEmulator(
  options: EmulatorOptions = {},
  internal: { services?: readonly ServiceDef[]; defaultClock?: ClockMode } = {},
): Promise<{ core: EmulatorRuntime; app: ReturnType<typeof createApp>; loaded: LoadedConfig<Config>; log: Logger }> {
  const inline = typeof options.config === "string" ? undefined : extractInlineHandlers(options.config);
  const source = inline === undefined ? readConfigFile(options.config as string) : inlineSource(inline.config);
  const handlers: Record<string, Handler> = { ...options.handlers };
  for (const [name, fn] of Object.entries(inline?.functions ?? {})) {
    if (name in handlers) throw new ConfigError(`handlers["${name}"]: the name is taken by a handler function given in config; choose another`);
    handlers[name] = fn;
  }
  // Every problem of the config at once: those of its handlers with those of its values.
  const everyProblem = (e: unknown) => withEveryHandlerProblem(e, source.raw, source.baseDir, handlers).then((all) => Promise.reject(all));
  // The config is checked against the services built: their collections are reserved ids and fault operations.
  const reader = configFor(internal.services);
  const loaded = await Promise.resolve().then(() => reader.validated(source)).catch(everyProblem);
  const config = loaded.config;
  checkPortOption(options.port);
  const clockOpt = typeof options.clock === "string" ? { mode: options.clock } : options.clock;
  checkClockOption(clockOpt);
  const start = clockOpt?.start ?? config.clock.start;
  const level: LogLevel = options.logLevel ?? (options.log ? config.logLevel : "silent");
  const write = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  let clock: VirtualClock | undefined;
  const log = createLogger(level, write, () => clock?.now() ?? Date.now());
  const onError = (e: unknown, label: string) => log.error(`timer ${label} failed: ${(e as Error)?.stack ?? String(e)}`);
  clock = new VirtualClock({
    mode: clockOpt?.mode ?? config.clock.mode ?? internal.defaultClock ?? "auto",
    speed: clockOpt?.speed ?? config.clock.speed,
    // The process's wall, or the wall time a test gives on the process's event loop.
    wall: wallOf(typeof clockOpt === "object" && "wall" in clockOpt ? clockOpt.wall : undefined, onError),
    start: start === undefined ? undefined : typeof start === "number" ? start : Date.parse(start),
    onError,
    onSettleTimeout: (holds) => log.warn(`clock: ${holds} handler call(s) still busy after the settle timeout; moving on`),
  });
  if (options.importFile !== undefined) checkStateFile(options.importFile);
  const core = await buildRuntime({
    config,
    configLabel: loaded.label,
    baseDir: loaded.baseDir,
    db: options.db ?? ":memory:",
    clock,
    handlers,
    log,
    importFile: options.importFile,
    services: internal.services,
    faultRuleSchema: reader.faultRuleSchema,
  }).catch(everyProblem);
  const app = createApp(core, { version: VERSION, controlKey: config.controlKey });
  return { core, app, loaded, log };
}

/**
 * Starts an emulator: `createEmulator()` in a test suite (a free port of 127.0.0.1, the auto
 * clock). Several can run in one process; each has its own clock, database and server.
 */
export function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator(options, "auto");
}

/**
 * `createEmulator` with another default clock: the minipod command's is `real`, a server for people
 * to use. `warm`: build what the first request of a kind would otherwise pay for (the GraphQL
 * schema, 50 ms and more) in a turn of its own once listening, as the command does; an emulator of
 * a test suite builds it when first asked, so the many a suite starts do not each pay for it.
 */
export async function startEmulator(options: EmulatorOptions, defaultClock: ClockMode, { warm = false } = {}): Promise<Emulator> {
  const allowedHosts = mergeAllowedHosts(options.allowedHosts);
  const { core, app, loaded, log } = await buildEmulator(options, { defaultClock });
  const host = options.host ?? "127.0.0.1";
  // The Host allow-list, cross-origin writes, then the route table: see http/pipeline.ts.
  const pipeline = requestPipeline(app, core, { host, allowed: allowedHosts(loaded.config.allowedHosts), log, declined: (req, socket, head) => servePlain(server, req, socket, head) });
  const server: Server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, pipeline.request);
  // What node cannot read as a request gets a problem naming why, not an empty 400.
  server.on("clientError", pipeline.clientError);
  // A proxy's tunnel (CONNECT) is refused with a problem rather than a dropped connection.
  server.on("connect", pipeline.connect);
  // Upgraded connections are no longer the server's to close: they are ended with it.
  const upgraded = new Set<import("node:stream").Duplex>();
  server.on("upgrade", (req, socket, head) => {
    if (pipeline.upgrade(req, socket, head)) {
      upgraded.add(socket);
      socket.once("close", () => upgraded.delete(socket));
      return;
    }
    // An upgrade minipod does not take (h2c, a WebSocket elsewhere) is ignored: served as a plain request.
    servePlain(server, req, socket, head);
  });
  // Keep idle connections longer than any client keeps them in its pool: a client reusing one the
  // server has just closed gets a broken pipe, and the service's Python worker runtime (aiohttp,
  // 15 s idle) does not retry a post that meets one, so a result or stream chunk sent after a
  // quiet spell of 5 s (Node's default) to 15 s was lost.
  server.keepAliveTimeout = SERVER_KEEP_ALIVE_MS;
  server.headersTimeout = SERVER_KEEP_ALIVE_MS + 5_000;
  const tls = serveTls(server, options.tls, host, allowedHosts(loaded.config.allowedHosts), log);
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve(server.address() as AddressInfo));
  }).catch((e: NodeJS.ErrnoException) => {
    core.close();
    // The code (EADDRINUSE, EACCES...) for a caller to act on; the words of this API, not the CLI's.
    const message = e.code === "EADDRINUSE" ? `port ${options.port} of ${host} is already in use; choose another port, or 0 for a free one` : e.message;
    throw Object.assign(new Error(message, { cause: e }), { code: e.code, port: options.port, host });
  });
  core.ownAddress.listening(host, address.port);
  const warnings = exposureWarnings(host, { apiKeys: loaded.config.auth.keys.length > 0, controlKey: loaded.config.controlKey !== undefined });
  for (const w of warnings) log.warn(w);
  const urlHost = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
  let closed: Promise<void> | undefined;
  const url = `http://${urlHost}:${address.port}`;
  const workers = new EmulatorWorkers(core, url, options.log ?? ((line) => process.stderr.write(line + "\n")));
  // Worker processes of load-balancing endpoints are in the pool once their health check says so.
  const health = new HealthPoller(core.loadBalancers, log).start();
  for (const spec of options.workers ?? []) {
    if (spec.scaled) workers.scale(spec);
    else workers.start(spec);
  }
  // Endpoints whose image is a command (`images`) get worker processes of it.
  const imageOutput = options.log ?? ((line: string) => process.stderr.write(line + "\n"));
  const imageWorkers = new ImageWorkers({ core, workers, launchOf: imageLauncher(core, loaded.config, loaded.baseDir, imageOutput), output: imageOutput });
  if (warm) setImmediate(() => closed === undefined && core.graphqlSchema());
  return {
    url,
    port: address.port,
    host,
    config: loaded.config,
    recovered: core.recovered,
    warnings,
    tls: tls && { caFile: tls.caFile },
    clock: { mode: core.clock.mode, now: () => core.clock.now(), advance: (ms) => core.clock.advance(ms), sleep: (ms) => clientSleep(core.clock, ms) },
    reset: () => core.reset(),
    // Queue and load-balancing endpoints, in the order they were made.
    endpoints: () => core.endpoints.list(),
    faults: {
      add: (rule) => core.faults.add(parseFaultRule(core.faultRuleSchema, rule)),
      list: () => core.faults.list(),
      remove: (id) => core.faults.remove(id),
      clear: () => core.faults.clear(),
    },
    webhooks: (jobId) => core.observe.deliveries(jobId),
    requests: (filter = {}) => core.observe.requests(filter),
    events: (jobId) => core.observe.events(jobId),
    snapshot: (name) => core.snapshots.save(name),
    saveSnapshot: (name) => core.snapshots.saveInSteps(name),
    restore: (name) => core.snapshots.restore(name),
    deleteSnapshot: (name) => core.snapshots.delete(name),
    waitForJob: (endpointId, jobId, status, withinMs = 3_600_000) => core.waitForJob(endpointId, jobId, status, withinMs),
    runUntilIdle: (maxMs) => core.runUntilIdle(maxMs),
    reloadHandlers: () => core.handlers.reloadModules(),
    app,
    startWorker: (spec) => workers.start(spec),
    scaleWorkers: (spec) => workers.scale(spec),
    close(closeOptions) {
      // Worker processes first (their held polls are answered as they stop), then the server.
      health.stop();
      imageWorkers.close();
      for (const socket of upgraded) socket.destroy();
      tls?.destroyPending();
      closed ??= workers.stopAll().then(
        () =>
          new Promise<void>((resolve) => {
            // Answer held requests, let answers in flight finish, drop keep-alive sockets as they
            // go idle; whatever is still open after 2 s is cut.
            const idle = setInterval(() => server.closeIdleConnections(), 25);
            const cut = setTimeout(() => server.closeAllConnections(), 2000);
            server.close(() => {
              clearInterval(idle);
              clearTimeout(cut);
              // Its connections to load-balancing workers end with it (the pools close before it resolves).
              const pools = core.workerConnections.close();
              core.close();
              void pools.then(resolve);
            });
            server.closeIdleConnections();
            core.workerProtocol.close();
            core.notifier.releaseAll(closeOptions?.restarting ? RESTARTING_CAUSE : CLOSING_CAUSE, core.clock.now());
          }),
      );
      return closed;
    },
  };
}
