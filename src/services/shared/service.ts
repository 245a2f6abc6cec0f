import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AtField } from "../../config/load.js";
import type { ConfigPart } from "../../config/part.js";
import type { VirtualClock } from "../../domain/clock.js";
import type { HandlerRegistry } from "../../domain/handlers/registry.js";
import type { LogBook } from "../../domain/logbook.js";
import type { Logger } from "../../domain/logger.js";
import type { JobService } from "../../domain/jobs.js";
import type { JobNotifier } from "../../domain/notifier.js";
import type { Webhooks } from "../../domain/webhooks.js";
import type { JobStore } from "../../domain/ports.js";
import type { EndpointRegistry } from "../../domain/endpoint-registry.js";
import type { Scheduler } from "../../domain/scheduler.js";
import type { WorkerEvent } from "../../domain/simulated-workers.js";
import type { WorkerProtocol } from "../../domain/worker-protocol.js";
import type { AppEnv } from "../../http/env.js";
import type { GraphQLPart } from "./graphql.js";
import { newResourceId } from "../../domain/ids.js";
import type { Documents, DocumentStore, PieceStore, StoredDocument, UsageStore } from "./storage.js";

/**
 * A management resource of the REST surface (network volumes, templates, endpoints, pods...) is
 * one service: one folder under `src/services/`, whose `index.ts` exports its `ServiceDef`, and one
 * line in the list of `src/services/index.ts`. Everything else is derived from the list: the
 * app's routes, the REST collections the path classification and fault rules know, seeding from
 * the config, reset and snapshot restore (see `src/compose/lifecycle.ts`).
 */
export interface ServiceDef<Name extends string = string, Models extends object = object, C extends Collections = Collections, P extends ConfigPart = ConfigPart> {
  /** Names the service in messages and in the lifecycle's order. */
  readonly name: Name;
  /**
   * The collections it serves, as the first path segment after the version: `networkvolumes` on
   * v1, `network-volumes` on v2. The path classification reads them (`/v2/{first}` is REST, not an
   * endpoint's queue), and so do fault rules' `operation` names and the config's reserved ids.
   */
  readonly collections: C;
  /**
   * Its part of the config file, from its folder's `config.ts`: its keys (and those it adds to
   * each configured endpoint) and their cross-checks. The config's schema joins the parts of the
   * services built (config/schema.ts).
   */
  readonly config?: P;
  /**
   * Builds the service's models on their storage. What it returns joins the registry under its
   * keys (`{ networkVolumes }`), which later services and every view read. A service may read the
   * models of services listed before it at once, and of any service lazily (in closures that run
   * on requests), through `ctx.services`.
   */
  build(ctx: ServiceContext): Models;
  /** Mounts its REST views (v1, v2) on the app. */
  routes?(app: OpenAPIHono<AppEnv>, views: ViewContext): void;
  /** Its part of the GraphQL API (`/graphql`): SDL and resolvers over its models (see graphql.ts). */
  readonly graphql?: GraphQLPart<ViewContext>;
  /** Writes what the config declares (start and reset, after every service is built and cleared). */
  seed?(models: Models, ctx: SeedContext): void | Promise<void>;
  /**
   * Forgets what is held outside its documents (reset); documents of the kinds it opened through
   * `ctx.documents` are emptied for it.
   */
  clear?(models: Models): void;
  /** After a snapshot was restored into the database, taken at virtual time `at`. */
  restored?(models: Models, at: number): void;
  /** Once the engine runs again (start, reset, restore): picks up what was under way in the database. */
  resume?(models: Models): void;
}

/** The REST collections of a service, by version (see `ServiceDef.collections`). */
export interface Collections {
  readonly v1?: readonly string[];
  readonly v2?: readonly string[];
}

/** What the job engine offers the services: the endpoints it serves, its jobs, and its events. */
export interface EngineView {
  clock: VirtualClock;
  log: Logger;
  /** The endpoints: stored (documents of kind "endpoint") and served. */
  endpoints: EndpointRegistry;
  jobs: Pick<JobStore, "list" | "deleteEndpointJobs" | "get" | "countByBatch" | "listBatch" | "batchJobIds">;
  /** The queue operations (batch requests are submitted and cancelled through them). */
  queue: Pick<JobService, "submitBatch" | "cancel">;
  /** Sends a notification with the retries and records of a job's webhook. */
  webhooks: Pick<Webhooks, "deliver">;
  notifier: JobNotifier;
  handlers: HandlerRegistry;
  scheduler: Scheduler;
  workerProtocol: WorkerProtocol;
  /** Pod and worker logs. */
  logs: LogBook;
  /** Subscribes to the simulated workers' starts and stops (billing meters them). */
  onWorker(fn: (e: WorkerEvent) => void): void;
}

/** What a service is built with. */
export interface ServiceContext {
  config: Config;
  engine: EngineView;
  /** The generic storage of management resources: JSON documents of one kind (see storage.ts). */
  documents<T extends StoredDocument>(kind: string): DocumentStore<T>;
  /** The bytes of documents of one kind, in pieces deleted with their document (see storage.ts). */
  pieces(kind: string): PieceStore;
  /** The usage intervals billing meters, committed with the jobs (see storage.ts). */
  usage: UsageStore;
  /** Every service's models; those of services built later are there once the list is built. */
  services: Registry;
}

/** A model's documents of `kind`, with the engine's clock and resource ids (see `Documents`). */
export const documentsOf = <T extends StoredDocument>(ctx: BuildReach<{ storage: "documents"; engine: "clock" }>, kind: string): Documents<T> => ({
  store: ctx.documents<T>(kind),
  clock: ctx.engine.clock,
  newId: newResourceId,
});

/** What seeding is given: the config, and how to name the config field a failure comes from. */
export interface SeedContext {
  config: Config;
  atField: AtField;
  engine: EngineView;
}

/**
 * What a service's `build` or `seed` reads of its context, member by member, so that its
 * signature says its reach: `storage` of the context's own (`documents`, `usage`; `atField` for
 * a seed), and the keys it reads of the `config`, the `engine` and the registry of `services`.
 * `build: (ctx: BuildReach<{ storage: "documents"; engine: "clock"; services: "pods" }>) => ...`
 */
export interface Reach {
  storage?: "documents" | "pieces" | "usage" | "atField";
  config?: keyof Config;
  engine?: keyof EngineView;
  services?: keyof Registry;
}
type Of<R extends Reach, K extends keyof Reach> = R extends { [k in K]: infer V extends NonNullable<Reach[K]> } ? V : never;
type Reached<R extends Reach> = { config: Pick<Config, Of<R, "config">>; engine: Pick<EngineView, Of<R, "engine">> };
/** The part of the service context a build reads (see `Reach`). */
export type BuildReach<R extends Reach> = Pick<ServiceContext, Extract<Of<R, "storage">, "documents" | "pieces" | "usage">> & Reached<R> & { services: Pick<Registry, Of<R, "services">> };
/** The part of the seed context a seed reads (see `Reach`). */
export type SeedReach<R extends Reach> = Pick<SeedContext, Extract<Of<R, "storage">, "atField">> & Reached<R>;

/** The models of every service, by key (the list's types give them; see `Services` in ../index.ts). */
export type Registry = import("../index.js").Services;

/** The config, with the parts of the services of the list (see `Config` in ../index.ts). */
type Config = import("../index.js").Config;

/** What views read: every service's models, and the engine's clock, endpoints, notifier and logs. */
export type ViewContext = Registry & Pick<EngineView, "clock" | "endpoints" | "notifier" | "logs">;
