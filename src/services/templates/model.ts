import { found, inUseBy, invalidBody } from "../shared/invalid.js";
import type { Documents } from "../shared/storage.js";
import { EmulatorError } from "../../domain/errors.js";
import { Listeners } from "../../domain/listeners.js";

export const TEMPLATE_CATEGORIES = ["NVIDIA", "AMD", "CPU"] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/** The v1 Template fields a user sets (rest-v1 TemplateCreateInput). */
export interface TemplateFields {
  imageName: string;
  isServerless: boolean;
  category: TemplateCategory;
  containerDiskInGb: number;
  volumeInGb: number;
  volumeMountPath: string;
  env: Record<string, string>;
  ports: string[];
  readme: string;
  isPublic: boolean;
  dockerEntrypoint: string[];
  dockerStartCmd: string[];
  containerRegistryAuthId: string | undefined;
  /** Containers made from the template get SSH access (a `PUBLIC_KEY` env of the account's keys). */
  startSsh: boolean;
  /** Containers made from the template start JupyterLab (a generated `JUPYTER_PASSWORD`). */
  startJupyter: boolean;
  /** Acceptable CUDA versions of the host, `major.minor`; empty: any. */
  allowedCudaVersions: string[];
}

export interface Template extends TemplateFields {
  id: string;
  /** Unique among templates, as on the real service. */
  name: string;
  /**
   * Emulator extension: the handler that endpoints made from this template run (a registered
   * name or, from the config only, a module path). Unset: the config's `defaultHandler`.
   */
  handler: string | undefined;
  /**
   * Set on the template the v2 surface makes for an endpoint (the endpoint's own container
   * settings): the endpoint it belongs to. Such a template is listed only on request and goes
   * when its endpoint goes.
   */
  boundEndpointId?: string | undefined;
  createdAt: number;
  updatedAt: number;
}

/** Defaults of rest-v1 TemplateCreateInput. */
export const TEMPLATE_DEFAULTS: Readonly<Omit<TemplateFields, "imageName" | "containerRegistryAuthId">> = {
  isServerless: false,
  category: "NVIDIA",
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: "/workspace",
  env: {},
  ports: ["8888/http", "22/tcp"],
  readme: "",
  isPublic: false,
  dockerEntrypoint: [],
  dockerStartCmd: [],
  startSsh: false,
  startJupyter: false,
  allowedCudaVersions: [],
};

export type NewTemplate = Partial<TemplateFields> & {
  id?: string | undefined;
  name: string;
  imageName: string;
  handler?: string | undefined;
  boundEndpointId?: string | undefined;
};
/** Only the fields given change; a `containerRegistryAuthId` of null removes the credential. */
export type TemplateChange = Partial<Omit<TemplateFields, "containerRegistryAuthId">> & {
  name?: string | undefined;
  handler?: string | undefined;
  containerRegistryAuthId?: string | null | undefined;
};

export interface TemplateEvent {
  kind: "created" | "updated" | "deleted";
  template: Template;
  /** Fields whose value changed (updates only). */
  changed: string[];
  /** The template before the change (updates only). */
  previous?: Template;
}

/**
 * Templates: unique names, a handler that exists, and no deletion while an endpoint uses the
 * template. Changes are announced so that endpoints made from a template follow it.
 */
export class TemplateService {
  private readonly listeners = new Listeners<TemplateEvent>();

  constructor(
    private readonly d: Documents<Template> & {
      /** Handler names a template created or changed through the API may name. */
      handlerNames: () => string[];
      usedBy?: (templateId: string) => string[];
    },
  ) {}

  /** Every template; those made for an endpoint (bound) only with `includeBound`. */
  list(o: { includeBound?: boolean } = { includeBound: true }): Template[] {
    const all = this.d.store.list();
    return o.includeBound ? all : all.filter((t) => t.boundEndpointId === undefined);
  }

  get(id: string): Template {
    return found(this.d.store.get(id), "template", id);
  }

  find(id: string): Template | undefined {
    return this.d.store.get(id);
  }

  /**
   * Creates a template. `handlerKnown`: the handler comes from a template or endpoint that runs
   * it already (the template the v2 surface makes for an endpoint), so a module path is fine.
   */
  create(input: NewTemplate, o: { handlerKnown?: boolean } = {}): Template {
    const id = input.id ?? this.d.newId();
    if (this.d.store.get(id)) throw new EmulatorError("CONFLICT", `template "${id}" already exists`);
    const errors = [...this.checkName(input.name, id), ...(o.handlerKnown ? [] : this.checkHandler(input.handler)), ...checkImage(input.imageName)];
    if (errors.length) throw invalidBody(errors);
    const now = this.d.clock.now();
    const template = build(input, id, now, now);
    this.d.store.save(template);
    this.emit({ kind: "created", template, changed: [] });
    return template;
  }

  /** Changes a template; `handlerKnown` as for `create`. */
  update(id: string, change: TemplateChange, o: { handlerKnown?: boolean } = {}): Template {
    const current = this.get(id);
    const errors: string[] = [];
    if (change.name !== undefined) errors.push(...this.checkName(change.name, id));
    if (change.handler !== undefined && !o.handlerKnown) errors.push(...this.checkHandler(change.handler));
    if (change.imageName !== undefined) errors.push(...checkImage(change.imageName));
    if (errors.length) throw invalidBody(errors);
    const defined = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined).map(([k, v]) => [k, v === null ? undefined : v]));
    const template: Template = { ...current, ...defined, updatedAt: this.d.clock.now() };
    const changed = Object.keys(defined).filter((k) => JSON.stringify(current[k as keyof Template]) !== JSON.stringify(template[k as keyof Template]));
    this.d.store.save(template);
    this.emit({ kind: "updated", template, changed, previous: current });
    return template;
  }

  delete(id: string): void {
    const template = this.get(id);
    const users = this.d.usedBy?.(id) ?? [];
    if (users.length) throw inUseBy(users, `template "${id}"`, "is used by", (them) => `delete ${them} or give ${them} another template first`);
    this.d.store.delete(id);
    this.emit({ kind: "deleted", template, changed: [] });
  }

  /**
   * Writes a template declared in the config as declared (start and reset). Its handler may be
   * a module path, which the caller has loaded.
   */
  seed(input: NewTemplate & { id: string }): void {
    const existing = this.d.store.get(input.id);
    const now = this.d.clock.now();
    this.d.store.save(build(input, input.id, existing?.createdAt ?? now, now));
  }

  /** Calls `fn` on every creation, change and deletion until the returned function is called. */
  subscribe(fn: (e: TemplateEvent) => void): () => void {
    return this.listeners.subscribe(fn);
  }

  private emit(e: TemplateEvent): void {
    this.listeners.emit(e);
  }

  private checkName(name: string, selfId: string): string[] {
    if (name.trim() === "") return ["$.name: expected a non-empty name"];
    const taken = this.d.store.list().find((t) => t.name === name && t.id !== selfId);
    return taken ? [`$.name: template names are unique and "${name}" is taken by template ${taken.id}`] : [];
  }

  private checkHandler(handler: string | undefined): string[] {
    if (handler === undefined) return [];
    const names = this.d.handlerNames();
    return names.includes(handler) ? [] : [`$.handler: unknown handler "${handler}"; use one of ${names.join(", ")} (module paths are accepted in the config only)`];
  }
}

function checkImage(imageName: string): string[] {
  return imageName.trim() === "" ? ["$.imageName: expected an image name such as runpod/worker:latest"] : [];
}

function build(input: NewTemplate, id: string, createdAt: number, updatedAt: number): Template {
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as NewTemplate;
  return {
    ...TEMPLATE_DEFAULTS,
    containerRegistryAuthId: undefined,
    handler: undefined,
    ...defined,
    id,
    createdAt,
    updatedAt,
  };
}
