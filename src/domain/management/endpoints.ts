import type { EndpointSpec, HandlerRef } from "../endpoint.js";
import { ENDPOINT_COLD_START_DEFAULT_MS, ENDPOINT_IDLE_TIMEOUT_DEFAULT_S, ENDPOINT_WORKERS_MAX_DEFAULT, ENDPOINT_WORKERS_MIN_DEFAULT } from "../limits.js";
import type { JobChange } from "../notifier.js";
import type { EndpointStore, JobStore } from "../ports.js";
import type { SimWorker } from "../workers.js";
import { ENDPOINT_FIELD_DEFAULTS, endpointFields, toExtra, type EndpointFields } from "./endpoint-fields.js";
import { invalidBody, notFound } from "./invalid.js";
import type { NetworkVolumeService } from "./network-volumes.js";
import type { Now } from "./ports.js";
import type { Template, TemplateEvent, TemplateService } from "./templates.js";

/** What the scheduler does for the management surface: serve, re-tune and stop endpoints. */
export interface EndpointRuntime {
  attach(spec: EndpointSpec, warm: boolean): void;
  update(spec: EndpointSpec): void;
  detach(endpointId: string): void;
  pool(endpointId: string): { list(): SimWorker[] } | undefined;
}

/** The queue settings the scheduler runs on, as the v1 body names them. */
export interface EndpointQueueSettings {
  name: string;
  workersMin: number;
  workersMax: number;
  idleTimeout: number;
  executionTimeoutMs: number | undefined;
}

export type NewEndpoint = Partial<Omit<EndpointFields, "version" | "templateId">> &
  Partial<Omit<EndpointQueueSettings, "name">> & { name: string; templateId: string };

export type EndpointChange = Partial<Omit<EndpointFields, "version">> & Partial<EndpointQueueSettings>;

/** An endpoint as the management surface reports it. */
export interface ManagedEndpoint {
  spec: EndpointSpec;
  fields: EndpointFields;
}

/** Management fields a configured endpoint declares; the rest of its extra is the API's. */
const CONFIG_FIELDS = ["templateId", "gpuTypeIds", "gpuCount", "networkVolumeId"] as const;

/** Template changes that are not a new release (they change nothing a worker runs). */
const IN_PLACE_TEMPLATE_FIELDS = new Set(["name", "readme", "isPublic"]);

/**
 * Endpoints of the management surface. A created endpoint serves the queue at once with its
 * template's handler (else the configured default); changes to its worker settings reach its
 * simulated workers at once; a deleted endpoint and its jobs are gone.
 */
export class EndpointManager {
  constructor(
    private readonly d: {
      store: EndpointStore;
      clock: Now;
      newId: () => string;
      runtime: EndpointRuntime;
      templates: TemplateService;
      volumes: NetworkVolumeService;
      handlers: { prepare(ref: HandlerRef): Promise<void> };
      jobs: Pick<JobStore, "list" | "deleteEndpointJobs">;
      /** Told of every job that goes with a deleted endpoint, so requests held on them answer 404 at once. */
      notifier: { emit(change: JobChange): void };
      defaultHandler: string;
    },
  ) {
    d.templates.subscribe((e) => this.onTemplate(e));
  }

  list(): ManagedEndpoint[] {
    return this.d.store.list().map(managed);
  }

  get(id: string): ManagedEndpoint {
    const spec = this.d.store.get(id);
    if (!spec) throw notFound("endpoint", id);
    return managed(spec);
  }

  /** The simulated workers of an endpoint, as the scheduler has them now. */
  workers(id: string): SimWorker[] {
    return this.d.runtime.pool(id)?.list() ?? [];
  }

  async create(input: NewEndpoint): Promise<ManagedEndpoint> {
    const template = this.d.templates.find(input.templateId);
    const { name, templateId, workersMin, workersMax, idleTimeout, executionTimeoutMs, ...rest } = input;
    const fields: EndpointFields = { ...ENDPOINT_FIELD_DEFAULTS, ...defined(rest), templateId, version: 0 };
    const settings: EndpointQueueSettings = {
      name,
      workersMin: workersMin ?? ENDPOINT_WORKERS_MIN_DEFAULT,
      workersMax: workersMax ?? ENDPOINT_WORKERS_MAX_DEFAULT,
      idleTimeout: idleTimeout ?? ENDPOINT_IDLE_TIMEOUT_DEFAULT_S,
      executionTimeoutMs,
    };
    this.check(settings, fields, template, true);
    const handler = this.handlerOf(template);
    await this.d.handlers.prepare(handler);
    const spec: EndpointSpec = {
      id: this.d.newId(),
      ...settings,
      handler,
      coldStartMs: ENDPOINT_COLD_START_DEFAULT_MS,
      createdAt: this.d.clock.now(),
      extra: toExtra(fields),
    };
    this.d.store.upsert(spec);
    this.d.runtime.attach(spec, false);
    return managed(spec);
  }

  /** PATCH and POST /update: only the fields given change; worker settings apply at once. */
  async update(id: string, change: EndpointChange): Promise<ManagedEndpoint> {
    const { spec: current, fields: was } = this.get(id);
    const { name, workersMin, workersMax, idleTimeout, executionTimeoutMs, ...rest } = change;
    const fields: EndpointFields = { ...was, ...defined(rest) };
    const settings: EndpointQueueSettings = {
      name: name ?? current.name,
      workersMin: workersMin ?? current.workersMin,
      workersMax: workersMax ?? current.workersMax,
      idleTimeout: idleTimeout ?? current.idleTimeout,
      executionTimeoutMs: executionTimeoutMs ?? current.executionTimeoutMs,
    };
    const templateChanged = change.templateId !== undefined && change.templateId !== was.templateId;
    const template = fields.templateId !== undefined ? this.d.templates.find(fields.templateId) : undefined;
    this.check(settings, fields, template, templateChanged);
    let handler = current.handler;
    if (templateChanged) {
      handler = this.handlerOf(template);
      await this.d.handlers.prepare(handler);
    }
    if (templateChanged || (change.env !== undefined && JSON.stringify(change.env) !== JSON.stringify(was.env))) fields.version = was.version + 1;
    const spec: EndpointSpec = { ...current, ...settings, handler, extra: { ...current.extra, ...toExtra(fields) } };
    this.d.store.upsert(spec);
    this.d.runtime.update(spec);
    return managed(spec);
  }

  /** Stops serving the endpoint and forgets it and its jobs: the queue surface answers 404. */
  delete(id: string): void {
    this.get(id);
    this.d.runtime.detach(id);
    const gone = this.jobsOf(id);
    this.d.jobs.deleteEndpointJobs(id);
    this.d.store.delete(id);
    const at = this.d.clock.now();
    for (const job of gone) this.d.notifier.emit({ id: job.id, endpointId: id, job: undefined, from: job.status, cause: "endpoint deleted", at });
  }

  /** Ids of the endpoints made from a template. */
  usingTemplate(templateId: string): string[] {
    return this.list().filter((e) => e.fields.templateId === templateId).map((e) => e.spec.id);
  }

  /** Ids of the endpoints a network volume is attached to. */
  usingVolume(volumeId: string): string[] {
    return this.list()
      .filter((e) => e.fields.networkVolumeId === volumeId || e.fields.networkVolumeIds?.includes(volumeId))
      .map((e) => e.spec.id);
  }

  /**
   * The `extra` of an endpoint declared in the config: the management fields it declares replace
   * the stored ones; what the API set otherwise stays.
   */
  configExtra(declared: Partial<Pick<EndpointFields, (typeof CONFIG_FIELDS)[number]>>, existing: EndpointSpec | undefined): Record<string, unknown> {
    const base = { ...(existing?.extra ?? {}) };
    for (const k of CONFIG_FIELDS) delete base[k];
    return { ...base, ...toExtra(declared) };
  }

  private jobsOf(endpointId: string): Array<{ id: string; status: JobChange["from"] }> {
    const page = 1000;
    const out: Array<{ id: string; status: JobChange["from"] }> = [];
    for (let offset = 0; ; offset += page) {
      const { jobs } = this.d.jobs.list({ endpointId, limit: page, offset });
      out.push(...jobs.map((j) => ({ id: j.id, status: j.status })));
      if (jobs.length < page) return out;
    }
  }

  private handlerOf(template: Template | undefined): string {
    return template?.handler ?? this.d.defaultHandler;
  }

  private check(s: EndpointQueueSettings, f: EndpointFields, template: Template | undefined, checkTemplate: boolean): void {
    const errors: string[] = [];
    if (checkTemplate && f.templateId !== undefined) {
      if (!template) errors.push(`$.templateId: unknown template "${f.templateId}"; create it with POST /v1/templates first`);
      else if (!template.isServerless) errors.push(`$.templateId: template "${template.id}" is not a serverless template (isServerless is false)`);
    }
    if (s.workersMin > s.workersMax) errors.push(`$.workersMin: workersMin (${s.workersMin}) must not exceed workersMax (${s.workersMax})`);
    if (s.name.trim() === "") errors.push("$.name: expected a non-empty name");
    if (f.networkVolumeId !== undefined && !this.d.volumes.has(f.networkVolumeId)) errors.push(`$.networkVolumeId: unknown network volume "${f.networkVolumeId}"`);
    f.networkVolumeIds?.forEach((v, i) => {
      if (!this.d.volumes.has(v)) errors.push(`$.networkVolumeIds[${i}]: unknown network volume "${v}"`);
    });
    if (errors.length) throw invalidBody(errors);
  }

  /** A template that changed: its endpoints follow (handler) and get a new version (release). */
  private onTemplate(e: TemplateEvent): void {
    if (e.kind !== "updated") return;
    const release = e.changed.some((k) => !IN_PLACE_TEMPLATE_FIELDS.has(k));
    if (!release) return;
    for (const { spec, fields } of this.list()) {
      if (fields.templateId !== e.template.id) continue;
      const next: EndpointSpec = { ...spec, handler: this.handlerOf(e.template), extra: { ...spec.extra, version: fields.version + 1 } };
      this.d.store.upsert(next);
      this.d.runtime.update(next);
    }
  }
}

const managed = (spec: EndpointSpec): ManagedEndpoint => ({ spec, fields: endpointFields(spec) });

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
