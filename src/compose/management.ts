import type { AtField } from "../config/load.js";
import type { Config } from "../config/schema.js";
import { configVolumeId } from "../config/management-schema.js";
import type { HandlerRegistry } from "../domain/handlers/registry.js";
import { newResourceId } from "../domain/ids.js";
import { EndpointManager, type EndpointRuntime } from "../services/endpoints/endpoints.js";
import { NetworkVolumeService } from "../services/network-volumes/network-volumes.js";
import { ReleaseLog, type Release } from "../services/endpoints/releases.js";
import { TemplateService } from "../services/templates/templates.js";
import type { Now } from "../services/shared/storage.js";
import type { JobChange } from "../domain/notifier.js";
import type { EndpointStore, JobStore } from "../domain/ports.js";
import type { Db } from "../store/db.js";
import { SqliteDocumentStore } from "../store/document-store.js";
import { SqliteNetworkVolumeStore } from "../services/network-volumes/store.js";
import { SqliteTemplateStore } from "../services/templates/store.js";

export interface Management {
  networkVolumes: NetworkVolumeService;
  templates: TemplateService;
  endpointManager: EndpointManager;
  /** Writes the configured templates and volumes (start, reset); endpoints are seeded after. */
  seed(atField: AtField): Promise<void>;
  /** Forgets every template, volume and release (reset). */
  clear(): void;
}

/** Wires the management surface's services on their SQLite stores. */
export function buildManagement(o: {
  db: Db;
  clock: Now;
  config: Config;
  handlers: HandlerRegistry;
  runtime: EndpointRuntime;
  endpoints: EndpointStore;
  jobs: Pick<JobStore, "list" | "deleteEndpointJobs">;
  notifier: { emit(change: JobChange): void };
}): Management {
  const { config, handlers } = o;
  // The usage checks ask the endpoint manager, built last: the closures only run on requests.
  let endpointManager: EndpointManager | undefined;
  const networkVolumes = new NetworkVolumeService({
    store: new SqliteNetworkVolumeStore(o.db),
    clock: o.clock,
    newId: newResourceId,
    usedBy: (id) => endpointManager?.usingVolume(id) ?? [],
  });
  const templates = new TemplateService({
    store: new SqliteTemplateStore(o.db),
    clock: o.clock,
    newId: newResourceId,
    handlerNames: () => handlers.names(),
    usedBy: (id) => endpointManager?.usingTemplate(id) ?? [],
  });
  const releases = new ReleaseLog({ store: new SqliteDocumentStore<Release>(o.db, "release"), newId: newResourceId });
  endpointManager = new EndpointManager({
    releases,
    store: o.endpoints,
    clock: o.clock,
    newId: newResourceId,
    runtime: o.runtime,
    templates,
    volumes: networkVolumes,
    handlers,
    jobs: o.jobs,
    notifier: o.notifier,
    defaultHandler: config.defaultHandler,
  });

  return {
    networkVolumes,
    templates,
    endpointManager,
    async seed(atField) {
      for (const [i, t] of config.templates.entries()) {
        if (t.handler !== undefined) await atField(`templates[${i}].handler`, () => handlers.prepare(t.handler!));
        templates.seed(t);
      }
      await atField("defaultHandler", () => handlers.prepare(config.defaultHandler));
      for (const v of config.networkVolumes) networkVolumes.seed({ ...v, id: configVolumeId(v) });
    },
    clear() {
      templates.deleteAll();
      networkVolumes.deleteAll();
      releases.deleteAll();
    },
  };
}
