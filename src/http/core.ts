import type { BodyBudget } from "./body.js";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { GraphQLSchema } from "graphql";
import type { VirtualClock } from "../domain/clock.js";
import type { WorkerConnections } from "./load-balancer/connections.js";
import type { FaultRuleSchema } from "../config/faults-schema.js";
import type { FaultRules } from "../domain/faults.js";
import type { WorkerProtocol } from "../domain/worker-protocol.js";
import type { ObservabilityStore } from "../domain/observability.js";
import type { JobStatus, JobView } from "../domain/job.js";
import type { JobService } from "../domain/jobs.js";
import type { OpenAiRequests } from "../domain/openai/requests.js";
import type { Logger } from "../domain/logger.js";
import type { RateLimits } from "../domain/rate-limit.js";
import type { JobNotifier } from "../domain/notifier.js";
import type { JobStore } from "../domain/ports.js";
import type { Scheduler } from "../domain/scheduler.js";
import type { EndpointRegistry } from "../domain/endpoint-registry.js";
import type { LoadBalancers } from "../domain/load-balancer/balancer.js";
import type { HandlerRegistry } from "../domain/handlers/registry.js";
import type { OpenAiSettingsOf } from "../domain/openai/settings.js";
import type { ApiKeys } from "./auth.js";
import type { FailureLog } from "./problem.js";
import type { AppEnv } from "./env.js";
import type { ServicePaths } from "./surfaces.js";
import type { OwnAddress } from "./own-address.js";

/** Named snapshots of the whole state (see compose/snapshots.ts). */
export interface SnapshotBook {
  list(): Array<{ name: string; at: number; bytes: number }>;
  /** Saves in one turn of the event loop. */
  save(name: string): { name: string; at: number; bytes: number };
  /** Saves by turns of about 10 ms (what the control API runs); requests wait for it (`held`). */
  saveInSteps(name: string): Promise<{ name: string; at: number; bytes: number }>;
  restore(name: string): Promise<{ name: string; at: number; bytes: number }>;
  /** While a restore or a save by turns runs: settles when it has ended (every request waits for it). */
  held(): Promise<void> | undefined;
  delete(name: string): boolean;
  totalBytes(): number;
  readonly bounds: { maxCount: number; maxBytes: number };
  /** The database as a SQLite file for `minipod export`, every secret redacted: its size and its bytes, streamed. */
  exportState(): Promise<{ bytes: number; body: ReadableStream<Uint8Array> }>;
}

/**
 * What the HTTP layer needs from the running emulator: the job engine and the control surface.
 * The management resources' REST views are mounted by `mountServices`, each with its own
 * service's models (see src/services/).
 */
export interface Core {
  clock: VirtualClock;
  jobs: JobService;
  scheduler: Scheduler;
  /** The endpoints, stored and served (whether one exists, and what it is). */
  endpoints: EndpointRegistry;
  /** Requests to /v2/{endpoint_id}/openai/*, run as jobs. */
  openai: OpenAiRequests;
  /** Load-balancing endpoints: their workers and the requests waiting for them. */
  loadBalancers: LoadBalancers;
  /** The connections kept open to load-balancing workers, ended by `close()`. */
  workerConnections: WorkerConnections;
  /** Handlers by name: a load-balancing endpoint's in-process fetch handler is one. */
  handlers: Pick<HandlerRegistry, "resolve">;
  /** Each endpoint's settings of the built-in OpenAI answers. */
  openAiSettings: OpenAiSettingsOf;
  log: Logger;
  /** Logs the errors answered to requests: a full disk once per 10 s, saying what is full here. */
  failures: FailureLog;
  /** Every job change, for live views (the dashboard's feed). */
  notifier: JobNotifier;
  /** Read-only job queries for the dashboard's listings; every change goes through `jobs`. */
  jobStore: Pick<JobStore, "get" | "list" | "chunks" | "chunkCount" | "countByStatus" | "whenDurable">;
  /** The accepted API keys and their scopes (`auth` of the config). */
  auth: ApiKeys;
  /** REST quotas and queue limits (`rateLimits` of the config), on the virtual clock. */
  rateLimits: RateLimits;
  /** Which surface a service path is on (REST collections come from the list of services). */
  paths: ServicePaths;
  /** The GraphQL API's schema, assembled from the services' parts (see services/shared/graphql.ts). */
  graphqlSchema(): GraphQLSchema;
  /**
   * An endpoint's fields as its management resource's v2 view shows them, but its env (it may
   * hold secrets) and its request URLs (they name this host). The dashboard's endpoint card lists them.
   */
  endpointView(id: string): Record<string, unknown> | undefined;
  /** Registers the REST views of every management resource (before the queue's routes). */
  mountServices(app: OpenAPIHono<AppEnv>): void;
  /** The worker side of the queue (job-take, job-done) for endpoints served by worker processes. */
  workerProtocol: WorkerProtocol;
  /** Fault rules (request and job faults). */
  faults: FaultRules;
  /** A fault rule as the control API takes it: its operations are those of the services built. */
  faultRuleSchema: FaultRuleSchema;
  /** minipod's own socket, once it listens: outgoing calls (webhooks) never reach it. */
  ownAddress: OwnAddress;
  /** Job timelines, webhook attempts and the request journal. */
  observe: ObservabilityStore;
  /** Bytes of request bodies held at once, all requests together (config `memory.requestBodyBytes`). */
  bodies: BodyBudget;
  /** Journal entries kept (config `journal.maxEntries`; 0 = off). */
  journalMax: number;
  /** Bytes of request bodies the journal keeps in all (config `journal.maxBodyBytes`). */
  journalBodyBytes: number;
  /** Snapshots of the whole state, by name. */
  snapshots: SnapshotBook;
  /** Advances the manual clock until no job waits or runs (and no webhook retry is due). */
  runUntilIdle(maxMs?: number): Promise<void>;
  /** The job's view once it reaches `status` (advancing the manual clock timer by timer); rejects with an EmulatorError otherwise. */
  waitForJob(endpointId: string, jobId: string, status: JobStatus, withinMs: number): Promise<JobView>;
  /** Empties jobs and returns to the configured state. */
  reset(): Promise<void>;
}
