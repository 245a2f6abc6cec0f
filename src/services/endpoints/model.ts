import type { EndpointSpec, EndpointType, HandlerRef } from "../../domain/endpoint.js";
import { ENDPOINT_COLD_START_DEFAULT_MS, ENDPOINT_IDLE_TIMEOUT_DEFAULT_S, ENDPOINT_WORKERS_MAX_DEFAULT, ENDPOINT_WORKERS_MIN_DEFAULT } from "../../domain/limits.js";
import type { JobChange } from "../../domain/notifier.js";
import type { EndpointStore, JobStore } from "../../domain/ports.js";
import type { SimWorker } from "../../domain/simulated-workers.js";
import { boundTemplate, changesContainer, containerFields, sourceTemplate, type ContainerChange } from "./endpoint-container.js";
import { ENDPOINT_FIELD_DEFAULTS, endpointFields, toExtra, withFields, type EndpointFields } from "./record.js";
import { invalidBody, notFound } from "../shared/invalid.js";
import type { NetworkVolumeService } from "../network-volumes/index.js";
import type { Now } from "../shared/storage.js";
import { configDiff, releaseConfig, type Release, type ReleaseLog } from "./releases.js";
import type { Template, TemplateEvent, TemplateService } from "../templates/index.js";

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

/** A new endpoint: v1 names its template; v2 gives container settings (and maybe a template to start from) instead. */
export type NewEndpoint = Partial<Omit<EndpointFields, "version" | "templateId" | "templateBound">> &
  Partial<Omit<EndpointQueueSettings, "name">> & { name: string; templateId?: string | undefined; type?: EndpointType | undefined };

/** Only the fields given change; `null` clears an optional one (a CUDA floor, the single network volume). */
export type EndpointChange = Partial<Omit<EndpointFields, "version" | "templateBound" | "minCudaVersion" | "networkVolumeId">> &
  Partial<EndpointQueueSettings> & { minCudaVersion?: string | null | undefined; networkVolumeId?: string | null | undefined };

/** An endpoint as the management surface reports it. */
export interface ManagedEndpoint {
  spec: EndpointSpec;
  fields: EndpointFields;
}

/** Management fields a configured endpoint declares; the rest of its extra is the API's. */
const CONFIG_FIELDS = ["templateId", "gpuTypeIds", "gpuCount", "networkVolumeId"] as const;

/**
 * Endpoints of the management surface. A created endpoint serves the queue at once with its
 * template's handler (else the configured default); changes to its worker settings reach its
 * simulated workers at once; a change of what its workers run is a release (its `version` goes
 * up, and the release is recorded); a deleted endpoint and its jobs are gone.
 */
export class EndpointManager {
  /** The endpoint whose own change is under way: its template's events are part of that change. */
  private changing: string | undefined;

  constructor(
    private readonly d: {
      store: EndpointStore;
      clock: Now;
      newId: () => string;
      runtime: EndpointRuntime;
      templates: TemplateService;
      volumes: NetworkVolumeService;
      releases: ReleaseLog;
      handlers: { prepare(ref: HandlerRef): Promise<void> };
      jobs: Pick<JobStore, "list" | "deleteEndpointJobs">;
      /** Told of every job that goes with a deleted endpoint, so requests held on them answer 404 at once. */
      notifier: { emit(change: JobChange): void };
      defaultHandler: string;
      /** The handler of an endpoint of this image when its template names none: "external" for an image of the config's `images`. */
      imageHandler?: (imageName: string) => string | undefined;
    },
  ) {
    d.templates.subscribe((e) => this.onTemplate(e));
  }

  list(): ManagedEndpoint[] {
    return this.d.store.list().map(managed);
  }

  get(id: string): ManagedEndpoint {
    const endpoint = this.find(id);
    if (!endpoint) throw notFound("endpoint", id);
    return endpoint;
  }

  /** The endpoint, or undefined when there is none of that id (one document read, where `list` reads them all). */
  find(id: string): ManagedEndpoint | undefined {
    const spec = this.d.store.get(id);
    return spec && managed(spec);
  }

  /** The simulated workers of an endpoint, as the scheduler has them now. */
  workers(id: string): SimWorker[] {
    return this.d.runtime.pool(id)?.list() ?? [];
  }

  /** The endpoint's template, if it has one. */
  template(e: ManagedEndpoint): Template | undefined {
    return e.fields.templateId === undefined ? undefined : this.d.templates.find(e.fields.templateId);
  }

  /** Its release history, newest first. */
  releases(id: string): Release[] {
    const { spec, fields } = this.get(id);
    return this.d.releases.list(spec, fields.version);
  }

  /**
   * Creates an endpoint. From v1 it names a serverless template; from v2 (`container`) it gets a
   * template of its own with those settings, copied from `container.fromTemplate` if given.
   */
  async create(input: NewEndpoint, container?: ContainerChange): Promise<ManagedEndpoint> {
    const { name, templateId, workersMin, workersMax, idleTimeout, executionTimeoutMs, type, ...rest } = input;
    const id = this.d.newId();
    // A load-balancing endpoint scales on requests in flight: REQUEST_COUNT is its one scaler.
    if (type === "LOAD_BALANCER") {
      if (rest.scalerType === "QUEUE_DELAY") throw invalidBody(["$.scalerType: LOAD_BALANCER endpoints scale on REQUEST_COUNT (requests in flight per worker); QUEUE_DELAY is for queue endpoints"]);
      rest.scalerType = "REQUEST_COUNT";
    }
    const source = container ? sourceTemplate(this.d.templates, container.fromTemplate) : undefined;
    const template = container ? undefined : templateId === undefined ? undefined : this.d.templates.find(templateId);
    const fields: EndpointFields = { ...ENDPOINT_FIELD_DEFAULTS, ...defined(rest), templateId, templateBound: false, version: 0 };
    // A template's CUDA versions seed a GPU endpoint's, unless the body constrains CUDA itself.
    if (source?.allowedCudaVersions.length && fields.computeType === "GPU" && fields.allowedCudaVersions === undefined && fields.minCudaVersion === undefined) {
      fields.allowedCudaVersions = source.allowedCudaVersions;
    }
    const settings: EndpointQueueSettings = {
      name,
      workersMin: workersMin ?? ENDPOINT_WORKERS_MIN_DEFAULT,
      workersMax: workersMax ?? ENDPOINT_WORKERS_MAX_DEFAULT,
      idleTimeout: idleTimeout ?? ENDPOINT_IDLE_TIMEOUT_DEFAULT_S,
      executionTimeoutMs,
    };
    this.check(settings, fields, container ? { isServerless: true } : template, container === undefined);
    let handler = this.handlerOf(template);
    if (container) {
      const bound = this.d.templates.create(boundTemplate(id, undefined, source, container, source?.handler), { handlerKnown: true });
      Object.assign(fields, { templateId: bound.id, templateBound: true });
      handler = this.handlerOf(bound);
    }
    await this.d.handlers.prepare(handler);
    const now = this.d.clock.now();
    const spec: EndpointSpec = { id, ...(type === "LOAD_BALANCER" ? { type } : {}), ...settings, handler, coldStartMs: ENDPOINT_COLD_START_DEFAULT_MS, createdAt: now, extra: toExtra(fields) };
    this.d.store.save(spec);
    // The first release lists what the endpoint starts with (empty values left out).
    const initial = configDiff({}, releaseConfig(spec, fields, this.template(managed(spec)))).filter((d) => !isEmpty(d.new));
    this.d.releases.record(id, fields.version, now, initial);
    this.d.runtime.attach(spec, false);
    return managed(spec);
  }

  /**
   * PATCH and POST /update: only the fields given change; worker settings apply at once. A
   * `container` change (v2) goes to the endpoint's own template, made now if it has none.
   */
  async update(id: string, change: EndpointChange, container?: ContainerChange): Promise<ManagedEndpoint> {
    const before = this.get(id);
    const beforeConfig = releaseConfig(before.spec, before.fields, this.template(before));
    this.changing = id;
    try {
      if (changesContainer(container)) this.changeContainer(before, container, change);
    } finally {
      this.changing = undefined;
    }
    const { spec: current, fields: was } = this.get(id);
    const { name, workersMin, workersMax, idleTimeout, executionTimeoutMs, ...rest } = change;
    const fields: EndpointFields = { ...was, ...given(rest) };
    const settings: EndpointQueueSettings = {
      name: name ?? current.name,
      workersMin: workersMin ?? current.workersMin,
      workersMax: workersMax ?? current.workersMax,
      idleTimeout: idleTimeout ?? current.idleTimeout,
      executionTimeoutMs: executionTimeoutMs ?? current.executionTimeoutMs,
    };
    if (current.type === "LOAD_BALANCER" && fields.scalerType !== "REQUEST_COUNT")
      throw invalidBody(["$.scalerType: LOAD_BALANCER endpoints scale on REQUEST_COUNT (requests in flight per worker); QUEUE_DELAY is for queue endpoints"]);
    const templateChanged = fields.templateId !== before.fields.templateId;
    const template = this.template({ spec: current, fields });
    this.check(settings, fields, template, change.templateId !== undefined && change.templateId !== was.templateId);
    let handler = current.handler;
    if (change.templateId !== undefined && change.templateId !== was.templateId) handler = this.handlerOf(template);
    else if ((templateChanged || container?.fromTemplate !== undefined) && template?.handler !== undefined) handler = template.handler;
    if (handler !== current.handler) await this.d.handlers.prepare(handler);
    if (change.templateId !== undefined && change.templateId !== was.templateId) fields.templateBound = false;
    const next: EndpointSpec = { ...current, ...settings, handler, extra: withFields(current.extra, fields) };
    this.release(next, fields, beforeConfig);
    this.d.store.save(next);
    this.d.runtime.update(next);
    if (before.fields.templateBound && before.fields.templateId !== fields.templateId) this.dropTemplate(before.fields.templateId);
    return managed(next);
  }

  /** Stops serving the endpoint and forgets it, its jobs, its releases and its own template. */
  delete(id: string): void {
    const { fields } = this.get(id);
    this.d.runtime.detach(id);
    const gone = this.jobsOf(id);
    this.d.jobs.deleteEndpointJobs(id);
    this.d.store.delete(id);
    this.d.releases.forget(id);
    if (fields.templateBound) this.dropTemplate(fields.templateId);
    const at = this.d.clock.now();
    for (const job of gone) this.d.notifier.emit({ id: job.id, endpointId: id, job: undefined, from: job.status, batchId: job.batchId, cause: "endpoint deleted", at });
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
    // A template the v2 surface made for it goes with a declared one.
    for (const k of [...CONFIG_FIELDS, "templateBound"]) delete base[k];
    return { ...base, ...toExtra(declared) };
  }

  /** Applies container settings: to the endpoint's own template, or to a new one made for it. */
  private changeContainer(e: ManagedEndpoint, container: ContainerChange, change: EndpointChange): void {
    const source = sourceTemplate(this.d.templates, container.fromTemplate);
    const current = this.template(e);
    if (e.fields.templateBound && current) {
      // A template applied brings what it runs along with its settings.
      const handler = source?.handler === undefined ? {} : { handler: source.handler };
      this.d.templates.update(current.id, { ...containerFields(container, source), ...handler }, { handlerKnown: true });
    } else {
      const handler = source?.handler ?? current?.handler ?? (typeof e.spec.handler === "string" ? e.spec.handler : undefined);
      const bound = this.d.templates.create(boundTemplate(e.spec.id, current, source, container, handler), { handlerKnown: true });
      const { spec } = e;
      const extra = { ...spec.extra, ...toExtra({ templateId: bound.id, templateBound: true }) };
      this.d.store.save({ ...spec, handler: bound.handler ?? spec.handler, extra });
    }
    // The endpoint's env is the template's now: a PATCH's env replaces it whole.
    if (container.env !== undefined || source) change.env = {};
  }

  /** Records a release when what the workers run changed: the version goes up. */
  private release(spec: EndpointSpec, fields: EndpointFields, before: Record<string, unknown>): void {
    const diff = configDiff(before, releaseConfig(spec, fields, this.template({ spec, fields })));
    if (diff.length === 0) return;
    fields.version += 1;
    spec.extra = { ...spec.extra, version: fields.version };
    this.d.releases.record(spec.id, fields.version, this.d.clock.now(), diff);
  }

  private dropTemplate(templateId: string | undefined): void {
    if (templateId !== undefined && this.d.templates.find(templateId)) this.d.templates.delete(templateId);
  }

  private jobsOf(endpointId: string): Array<{ id: string; status: JobChange["from"]; batchId: string | undefined }> {
    const page = 1000;
    const out: Array<{ id: string; status: JobChange["from"]; batchId: string | undefined }> = [];
    for (let offset = 0; ; offset += page) {
      const { jobs } = this.d.jobs.list({ endpointId, limit: page, offset });
      out.push(...jobs.map((j) => ({ id: j.id, status: j.status, batchId: j.batchId })));
      if (jobs.length < page) return out;
    }
  }

  private handlerOf(template: Template | undefined): string {
    return template?.handler ?? (template ? this.d.imageHandler?.(template.imageName) : undefined) ?? this.d.defaultHandler;
  }

  private check(s: EndpointQueueSettings, f: EndpointFields, template: Pick<Template, "isServerless"> | undefined, checkTemplate: boolean): void {
    const errors: string[] = [];
    if (checkTemplate && f.templateId !== undefined) {
      if (!template) errors.push(`$.templateId: unknown template "${f.templateId}"; create it with POST /v1/templates first`);
      else if (!template.isServerless) errors.push(`$.templateId: template "${f.templateId}" is not a serverless template (isServerless is false)`);
    }
    if (s.workersMin > s.workersMax) errors.push(`$.workersMin: workersMin (${s.workersMin}) must not exceed workersMax (${s.workersMax})`);
    if (s.name.trim() === "") errors.push("$.name: expected a non-empty name");
    if (f.networkVolumeId !== undefined && !this.d.volumes.has(f.networkVolumeId)) errors.push(`$.networkVolumeId: unknown network volume "${f.networkVolumeId}"`);
    f.networkVolumeIds?.forEach((v, i) => {
      if (!this.d.volumes.has(v)) errors.push(`$.networkVolumeIds[${i}]: unknown network volume "${v}"`);
    });
    if (errors.length) throw invalidBody(errors);
  }

  /** A template that changed: its endpoints follow it (handler), and it is a release of each. */
  private onTemplate(e: TemplateEvent): void {
    if (e.kind !== "updated" || !e.previous) return;
    for (const { spec, fields } of this.list()) {
      if (fields.templateId !== e.template.id || spec.id === this.changing) continue;
      const before = releaseConfig(spec, fields, e.previous);
      const next: EndpointSpec = { ...spec, handler: this.handlerOf(e.template) };
      const nextFields = { ...fields };
      this.release(next, nextFields, before);
      if (nextFields.version === fields.version) continue;
      this.d.store.save(next);
      this.d.runtime.update(next);
    }
  }
}

const managed = (spec: EndpointSpec): ManagedEndpoint => ({ spec, fields: endpointFields(spec) });

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const isEmpty = (v: unknown): boolean => v === "" || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && v !== null && Object.keys(v).length === 0);

/** The fields a change gives, a null one as cleared (undefined). */
function given(o: object): Partial<EndpointFields> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined).map(([k, v]) => [k, v === null ? undefined : v])) as Partial<EndpointFields>;
}
