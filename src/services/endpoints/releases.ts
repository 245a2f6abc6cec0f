import type { EndpointSpec } from "../../domain/endpoint.js";
import type { EndpointFields } from "./record.js";
import type { DocumentStore } from "../shared/storage.js";
import type { Template } from "../templates/index.js";

/** One changed field of a release: its name and its old and new values (null when absent). */
export interface ReleaseDiff {
  field: string;
  old: unknown;
  new: unknown;
}

/** A version of an endpoint's configuration: what its workers run from then on. */
export interface Release {
  id: string;
  endpointId: string;
  version: number;
  createdAt: number;
  diff: ReleaseDiff[];
}

/** Template fields that change nothing a worker runs, so changing them is no release. */
const NOT_RELEASED = new Set(["id", "name", "readme", "isPublic", "createdAt", "updatedAt", "boundEndpointId"]);

/** What the workers of an endpoint run: its template's settings, its own env and its handler, by field name. */
export type ReleaseConfig = Record<string, unknown>;

/** The part of an endpoint's configuration whose change is a new release. */
export function releaseConfig(spec: Pick<EndpointSpec, "handler">, fields: Pick<EndpointFields, "templateId" | "env">, template: Template | undefined): ReleaseConfig {
  const config: ReleaseConfig = { templateId: fields.templateId ?? null, env: fields.env, handler: spec.handler };
  if (template) for (const [k, v] of Object.entries(template)) if (!NOT_RELEASED.has(k) && v !== undefined) config[`template.${k}`] = v;
  return config;
}

/** The fields whose value differs between two configurations, in a stable order. */
export function configDiff(before: ReleaseConfig, after: ReleaseConfig): ReleaseDiff[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((k) => JSON.stringify(before[k] ?? null) !== JSON.stringify(after[k] ?? null))
    .map((k) => ({ field: k, old: before[k] ?? null, new: after[k] ?? null }));
}

/**
 * The release history of endpoints: a release is recorded at creation and with every change of
 * what the workers run. Stored, so the history survives a restart.
 */
export class ReleaseLog {
  constructor(private readonly d: { store: DocumentStore<Release>; newId: () => string }) {}

  record(endpointId: string, version: number, createdAt: number, diff: ReleaseDiff[]): Release {
    const release: Release = { id: `rel_${this.d.newId()}`, endpointId, version, createdAt, diff };
    this.d.store.save(release, endpointId);
    return release;
  }

  /**
   * Newest first. An endpoint that has none recorded (declared in the config) shows its current
   * configuration as one release, from its creation.
   */
  list(spec: EndpointSpec, version: number): Release[] {
    const recorded = this.d.store.list(spec.id).reverse();
    if (recorded.length) return recorded;
    return [{ id: `rel_${spec.id}_${version}`, endpointId: spec.id, version, createdAt: spec.createdAt, diff: [] }];
  }

  forget(endpointId: string): void {
    this.d.store.deleteOwned(endpointId);
  }

  deleteAll(): void {
    this.d.store.deleteAll();
  }
}
