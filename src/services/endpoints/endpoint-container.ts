import { EmulatorError } from "../../domain/errors.js";
import { invalidBody } from "../shared/invalid.js";
import type { NewTemplate, Template, TemplateChange, TemplateService } from "../templates/index.js";

/**
 * The container settings of an endpoint as the v2 surface writes them on the endpoint itself.
 * They live in the endpoint's template: on v2 every endpoint has a template of its own (bound to
 * it, gone with it), as on the real service, and v1 shows it as the endpoint's `templateId`.
 */
export interface ContainerChange {
  imageName?: string | undefined;
  dockerStartCmd?: string[] | undefined;
  containerDiskInGb?: number | undefined;
  ports?: string[] | undefined;
  env?: Record<string, string> | undefined;
  /** null: no registry credential. */
  containerRegistryAuthId?: string | null | undefined;
  /** A serverless template whose settings apply first, once (explicit fields win; `env` merges per key). */
  fromTemplate?: string | undefined;
}

/** Whether a change names any container setting. */
export const changesContainer = (c: ContainerChange | undefined): c is ContainerChange =>
  c !== undefined && Object.values(c).some((v) => v !== undefined);

/** A template to copy settings from: it must exist (404) and be a serverless one (400). */
export function sourceTemplate(templates: TemplateService, id: string | undefined): Template | undefined {
  if (id === undefined) return undefined;
  const t = templates.find(id);
  if (!t) throw new EmulatorError("NOT_FOUND", `template "${id}" not found; list your templates with GET /v2/templates`);
  if (!t.isServerless) throw invalidBody([`$.templateId: template "${id}" is not a serverless template (serverless is false); endpoints take serverless templates only`]);
  return t;
}

/** The template fields a container change sets, the source template's first; a registry of null clears it. */
export function containerFields(change: ContainerChange, source: Template | undefined): TemplateChange {
  const out: TemplateChange = source
    ? {
        imageName: source.imageName,
        dockerStartCmd: source.dockerStartCmd,
        dockerEntrypoint: source.dockerEntrypoint,
        containerDiskInGb: source.containerDiskInGb,
        ports: source.ports,
        env: source.env,
        containerRegistryAuthId: source.containerRegistryAuthId ?? null,
      }
    : {};
  if (change.imageName !== undefined) out.imageName = change.imageName;
  if (change.dockerStartCmd !== undefined) out.dockerStartCmd = change.dockerStartCmd;
  if (change.containerDiskInGb !== undefined) out.containerDiskInGb = change.containerDiskInGb;
  if (change.ports !== undefined) out.ports = change.ports;
  if (change.env !== undefined) out.env = { ...(source?.env ?? {}), ...change.env };
  if (change.containerRegistryAuthId !== undefined) out.containerRegistryAuthId = change.containerRegistryAuthId;
  return out;
}

/**
 * The template made for an endpoint: the current template's settings (if any), the source's over
 * them, the change over both; serverless, bound to the endpoint, running `handler`.
 */
export function boundTemplate(endpointId: string, base: Template | undefined, source: Template | undefined, change: ContainerChange, handler: string | undefined): NewTemplate {
  const { containerRegistryAuthId, ...fields } = containerFields(change, source);
  // With nothing to inherit, what the body leaves out is absent: no volume, ports or env.
  const fresh: Partial<NewTemplate> = base || source ? {} : { volumeInGb: 0, ports: [], env: {} };
  const inherited = { ...fresh, ...(base ? copyable(base) : {}), ...(source ? copyable(source) : {}) };
  return {
    ...inherited,
    ...fields,
    containerRegistryAuthId: containerRegistryAuthId === undefined ? inherited.containerRegistryAuthId : (containerRegistryAuthId ?? undefined),
    imageName: fields.imageName ?? inherited.imageName ?? "",
    name: `endpoint-${endpointId}`,
    isServerless: true,
    handler,
    boundEndpointId: endpointId,
  };
}

/** A template's settings without its identity. */
function copyable(t: Template): Omit<NewTemplate, "name"> {
  const { id: _id, name: _name, createdAt: _c, updatedAt: _u, boundEndpointId: _b, ...rest } = t;
  return rest;
}
