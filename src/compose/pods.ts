import type { AtField } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { configPodId, configRegistryAuthId } from "../services/pods/config.js";
import type { Logger } from "../domain/logger.js";
import { BillingService } from "../services/billing/billing.js";
import type { NetworkVolumeService } from "../services/network-volumes/network-volumes.js";
import { PodService } from "../services/pods/pods.js";
import { priceList, type PriceList } from "../services/billing/pricing.js";
import { RegistryAuthService } from "../services/registry-auths/registry-auths.js";
import type { TemplateService } from "../services/templates/templates.js";
import type { UsageMeter } from "../services/billing/usage.js";
import type { Db } from "../store/db.js";
import type { LogBook } from "../domain/logbook.js";
import { SshKeys } from "../services/account/ssh-keys.js";
import { ClusterService } from "../services/clusters/clusters.js";
import { DelegationService } from "../services/registry-auths/delegations.js";
import { newResourceId } from "../domain/ids.js";
import { SqliteDocumentStore } from "../store/document-store.js";
import { SqlitePodStore } from "../services/pods/store.js";
import { SqliteRegistryAuthStore } from "../services/registry-auths/store.js";

export interface PodsAndBilling {
  pods: PodService;
  registryAuths: RegistryAuthService;
  billing: BillingService;
  prices: PriceList;
  sshKeys: SshKeys;
  clusters: ClusterService;
  delegations: DelegationService;
  /** Writes the configured registry auths and pods that the database lacks (start, reset). */
  seed(atField: AtField): void;
  /** Forgets every pod, registry auth, SSH key and usage record (reset). */
  clear(): void;
}

/**
 * Wires pods, container registry auths and billing on their SQLite stores. Usage comes from the
 * meter (workers, told by the scheduler; pods, told by the pod service) and from the network
 * volume service's events. Worker intervals a previous process left open are closed here, before
 * any new worker starts.
 */
export function buildPodsAndBilling(o: {
  db: Db;
  clock: { now(): number };
  config: Config;
  log: Logger;
  usage: UsageMeter;
  usageStore: ConstructorParameters<typeof BillingService>[0]["usage"];
  networkVolumes: NetworkVolumeService;
  templates: TemplateService;
  endpointName: (endpointId: string) => string | undefined;
  logs: LogBook;
}): PodsAndBilling {
  const { config, usage, networkVolumes, templates, clock } = o;
  const prices = priceList(config.pricing);
  const orphans = usage.closeOrphanWorkers();
  if (orphans > 0) o.log.info(`usage: ${orphans} worker(s) of the previous run billed until they were last seen`);

  const sshKeys = new SshKeys({ store: new SqliteDocumentStore(o.db, "ssh-keys"), clock });
  let pods: PodService | undefined;
  const registryAuths = new RegistryAuthService({
    clock,
    store: new SqliteRegistryAuthStore(o.db),
    usedBy: (id) => pods?.usingRegistryAuth(id) ?? templateUsing(templates, id),
  });
  pods = new PodService({
    clock,
    store: new SqlitePodStore(o.db),
    prices,
    usage,
    liveWorkers: () => usage.liveWorkers(),
    refs: {
      template: (id) => templates.find(id),
      networkVolume: (id) => (networkVolumes.has(id) ? { dataCenterId: networkVolumes.get(id).dataCenter } : undefined),
      registryAuthExists: (id) => registryAuths.exists(id),
      endpointName: o.endpointName,
      sshKeys: () => sshKeys.list(),
    },
    logs: o.logs,
  });
  const delegations = new DelegationService({ store: new SqliteDocumentStore(o.db, "ecr-delegation"), clock, newId: newResourceId });
  const clusters = new ClusterService({ store: new SqliteDocumentStore(o.db, "cluster"), pods, clock, newId: newResourceId });
  const templatesWithImage = (image: string) => templates.list().filter((t) => t.imageName === image).map((t) => t.id);
  const billing = new BillingService({ clock, usage: o.usageStore, prices, templatesWithImage });

  networkVolumes.subscribe((e) => {
    if (e.kind === "deleted") usage.volumeDeleted(e.volume.id, e.at);
    else usage.volumeSized(e.volume.id, { sizeGb: e.volume.size, volumeType: e.volume.type, dataCenterId: e.volume.dataCenter }, e.at);
  });

  const podService = pods;
  return {
    pods: podService,
    sshKeys,
    clusters,
    delegations,
    registryAuths,
    billing,
    prices,
    seed(atField) {
      for (const [i, a] of config.containerRegistryAuths.entries()) {
        const id = configRegistryAuthId(a);
        // An auth of that name made through the API since stands in for the declared one.
        if (!registryAuths.exists(id) && !registryAuths.list().some((r) => r.name === a.name)) atField(`containerRegistryAuths[${i}]`, () => registryAuths.create(a, id));
      }
      for (const [i, p] of config.pods.entries()) {
        const id = configPodId(p);
        const { id: _id, desiredStatus, ...input } = p;
        if (!podService.exists(id)) atField(`pods[${i}]`, () => podService.create(input, { id, desiredStatus }));
      }
    },
    clear() {
      podService.deleteAll();
      clusters.deleteAll();
      delegations.deleteAll();
      registryAuths.deleteAll();
      sshKeys.clear();
      usage.clear();
    },
  };
}

function templateUsing(templates: TemplateService, authId: string): string | undefined {
  const t = templates.list().find((t) => t.containerRegistryAuthId === authId);
  return t ? `template "${t.id}"` : undefined;
}
