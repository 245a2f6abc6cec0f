import { z } from "@hono/zod-openapi";
import { V2, withBody, view } from "../shared/rest.js";
import { TEMPLATE_CATEGORIES, TEMPLATE_DEFAULTS, type NewTemplate, type Template, type TemplateChange } from "./model.js";
import { argsOf, containerFromV2, containerRequest, containerResponse, cudaVersion, optionalContainerRequest, persistentMount, TemplateMountsSchema } from "../shared/container-v2.js";
import type { ViewContext } from "../shared/service.js";

/** v2 Template: the v1 fields under their v2 names (`image`, `args`, `disk`, `mounts`, `registry`, ...). */
export const TemplateV2Schema = z
  .object({
    id: z.string(),
    name: z.string(),
    ...containerResponse,
    mounts: TemplateMountsSchema,
    serverless: z.boolean(),
    public: z.boolean(),
    category: z.enum(TEMPLATE_CATEGORIES),
    startSsh: z.boolean(),
    startJupyter: z.boolean(),
    allowedCudaVersions: z.array(z.string()),
  })
  .openapi("TemplateV2");

const { image: _image, ...container } = optionalContainerRequest;
const optional = {
  ...container,
  allowedCudaVersions: z.array(cudaVersion()).optional(),
  category: z.enum(TEMPLATE_CATEGORIES).optional(),
  mounts: TemplateMountsSchema.optional(),
  public: z.boolean().optional(),
  serverless: z.boolean().optional(),
  startJupyter: z.boolean().optional(),
  startSsh: z.boolean().optional(),
};

export const CreateTemplateV2Schema = z
  .strictObject({ name: z.string().min(1), image: containerRequest.image, ...optional })
  .openapi("CreateTemplateRequest", { description: "Defaults: category NVIDIA, serverless and public false, startSsh and startJupyter true, no mount, no ports, no env" });

export const UpdateTemplateV2Schema = z
  .strictObject({ name: z.string().min(1).optional(), image: containerRequest.image.optional(), ...optional })
  .openapi("UpdateTemplateRequest", { description: "Only the fields given change; `registry: null` removes the credential, `allowedCudaVersions: []` the constraint" });

type CreateV2 = z.output<typeof CreateTemplateV2Schema>;
type UpdateV2 = z.output<typeof UpdateTemplateV2Schema>;

export function toTemplateV2(t: Template): z.infer<typeof TemplateV2Schema> {
  return {
    id: t.id,
    name: t.name,
    image: t.imageName,
    args: argsOf(t.dockerStartCmd),
    disk: t.containerDiskInGb,
    mounts: persistentMount(t.volumeInGb, t.volumeMountPath),
    ports: t.ports,
    env: t.env,
    registry: t.containerRegistryAuthId ?? null,
    serverless: t.isServerless,
    public: t.isPublic,
    category: t.category,
    startSsh: t.startSsh,
    startJupyter: t.startJupyter,
    allowedCudaVersions: t.allowedCudaVersions,
  };
}

/** The fields both bodies share, in the model's names. */
function fields(b: Omit<UpdateV2, "name" | "image">): TemplateChange {
  const { imageName: _image, ...container } = containerFromV2(b);
  const out: TemplateChange = {
    ...container,
    allowedCudaVersions: b.allowedCudaVersions,
    category: b.category,
    isPublic: b.public,
    isServerless: b.serverless,
    startJupyter: b.startJupyter,
    startSsh: b.startSsh,
  };
  const persistent = b.mounts?.persistent;
  if (persistent) Object.assign(out, { volumeInGb: persistent.size, volumeMountPath: persistent.path });
  return out;
}

/** A v2 create body as a new template: what v2 leaves out is absent (no mount, ports or env), SSH and Jupyter on. */
function newTemplateFromV2(b: CreateV2): NewTemplate {
  const { containerRegistryAuthId, ...rest } = fields(b);
  return {
    volumeInGb: 0,
    ports: [],
    env: {},
    startSsh: true,
    startJupyter: true,
    volumeMountPath: TEMPLATE_DEFAULTS.volumeMountPath,
    ...defined(rest),
    containerRegistryAuthId: containerRegistryAuthId ?? undefined,
    name: b.name,
    imageName: b.image,
  };
}

const templateChangeFromV2 = (b: UpdateV2): TemplateChange => ({ ...fields(b), name: b.name, imageName: b.image });

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** `/v2/templates`: `image`, `args`, `disk`, `mounts`, closed bodies. */
export const templateV2 = view<Template, Pick<ViewContext, "templates">>(V2, "templates", "Template", TemplateV2Schema, (_core, t) => toTemplateV2(t), {
  create: withBody(CreateTemplateV2Schema, (core, body) => core.templates.create(newTemplateFromV2(body))),
  update: withBody(UpdateTemplateV2Schema, (core, body, _c, id) => core.templates.update(id, templateChangeFromV2(body))),
});
