import type { VirtualClock } from "../domain/clock.js";
import type { FaultRules } from "../domain/faults.js";
import type { WorkerProtocol } from "../domain/worker-protocol.js";
import type { ObservabilityStore } from "../domain/observability.js";
import type { Snapshots } from "../compose/snapshots.js";
import type { JobService } from "../domain/jobs.js";
import type { OpenAiRequests } from "../domain/openai/requests.js";
import type { Logger } from "../domain/logger.js";
import type { EndpointManager } from "../services/endpoints/endpoints.js";
import type { ExternalWorkerReader } from "../services/endpoints/endpoint-workers.js";
import type { BillingService } from "../services/billing/billing.js";
import type { PriceList } from "../services/billing/pricing.js";
import type { NetworkVolumeService } from "../services/network-volumes/network-volumes.js";
import type { PodService } from "../services/pods/pods.js";
import type { SshKeys } from "../services/account/ssh-keys.js";
import type { ClusterService } from "../services/clusters/clusters.js";
import type { DelegationService } from "../services/registry-auths/delegations.js";
import type { LogBook } from "../domain/logbook.js";
import type { RegistryAuthService } from "../services/registry-auths/registry-auths.js";
import type { TemplateService } from "../services/templates/templates.js";
import type { RateLimits } from "../domain/rate-limit.js";
import type { JobNotifier } from "../domain/notifier.js";
import type { JobStore } from "../domain/ports.js";
import type { Scheduler } from "../domain/scheduler.js";
import type { ApiKeys } from "./auth.js";

/** What the HTTP layer needs from the running emulator. */
export interface Core {
  clock: VirtualClock;
  jobs: JobService;
  scheduler: Scheduler;
  /** Requests to /v2/{endpoint_id}/openai/*, run as jobs. */
  openai: OpenAiRequests;
  log: Logger;
  /** Every job change, for live views (the dashboard's feed). */
  notifier: JobNotifier;
  /** Read-only job queries for the dashboard's listings; every change goes through `jobs`. */
  jobStore: Pick<JobStore, "get" | "list" | "chunks" | "chunkCount" | "countByStatus" | "whenDurable">;
  /** The accepted API keys and their scopes (`auth` of the config). */
  auth: ApiKeys;
  /** REST quotas and queue limits (`rateLimits` of the config), on the virtual clock. */
  rateLimits: RateLimits;
  /** Network volumes of /v2/network-volumes and /v1/networkvolumes. */
  networkVolumes: NetworkVolumeService;
  /** Templates of /v1/templates. */
  templates: TemplateService;
  /** Endpoints of /v1/endpoints: create, change and delete what the scheduler serves. */
  endpointManager: EndpointManager;
  /** Pods of /v1/pods and their lifecycle. */
  pods: PodService;
  /** ECR pull delegations (`/v2/registries/delegations`). */
  delegations: DelegationService;
  /** Clusters of pods (`/v2/clusters`). */
  clusters: ClusterService;
  /** The account's SSH public keys (`/v2/account/ssh-keys`). */
  sshKeys: SshKeys;
  /** Pod and worker logs: lifecycle, jobs, and what handlers write with `ctx.log`. */
  logs: LogBook;
  /** Container registry auths of /v1/containerregistryauth (passwords never leave the store). */
  registryAuths: RegistryAuthService;
  /** The prices in effect (defaults and the config's pricing): billing and the catalog. */
  prices: PriceList;
  /** Billing records of /v1/billing, computed from recorded usage. */
  billing: BillingService;
  /** Worker processes present now, for the v2 workers listing. */
  externalWorkers: ExternalWorkerReader;
  /** The worker side of the queue (job-take, job-done) for endpoints served by worker processes. */
  workerProtocol: WorkerProtocol;
  /** Fault rules (request and job faults). */
  faults: FaultRules;
  /** Job timelines, webhook attempts and the request journal. */
  observe: ObservabilityStore;
  /** Journal entries kept (config `journal.maxEntries`; 0 = off). */
  journalMax: number;
  /** Bytes of request bodies the journal keeps in all (config `journal.maxBodyBytes`). */
  journalBodyBytes: number;
  /** Snapshots of the whole state, by name. */
  snapshots: Snapshots;
  /** Advances the manual clock until no job waits or runs (and no webhook retry is due). */
  runUntilIdle(maxMs?: number): Promise<void>;
  /** Empties jobs and returns to the configured state. */
  reset(): Promise<void>;
}
