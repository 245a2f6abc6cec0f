import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { RegistryAuthView } from "./model.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { serveResource, V1, V2, withBody, type ResourceRoutes } from "../shared/rest.js";
import { delegationRoutes } from "./delegations-rest.js";

const TAG = "Container registry auths";

/** v1 ContainerRegistryAuth: the password (and username) are never shown. */
export const RegistryAuthSchema = z.object({ id: z.string(), name: z.string().openapi({ example: "my creds" }) }).openapi("ContainerRegistryAuth");

export const RegistryAuthCreateSchema = z
  .object({
    name: z.string().min(1).openapi({ description: "Unique among container registry auths", example: "my creds" }),
    username: z.string().min(1).openapi({ example: "my-username" }),
    password: z.string().min(1).openapi({ description: "Stored; never returned, logged or exported", example: "my-password" }),
  })
  .openapi("ContainerRegistryAuthCreateInput");

/** v2 CreateRegistryRequest: the same fields, the body closed. */
export const CreateRegistrySchema = z
  .strictObject({ name: z.string().min(1), username: z.string().min(1), password: z.string().min(1).openapi({ description: "Stored; never returned, logged or exported" }) })
  .openapi("CreateRegistryRequest");

export const RegistrySchema = z.object({ id: z.string(), name: z.string() }).openapi("Registry");

/**
 * Container registry credentials: `/v2/registries[/{id}]` and
 * `/v1/containerregistryauth[/{containerRegistryAuthId}]`. Neither shows the username or password.
 */
export const registryAuthsResource: ResourceRoutes<RegistryAuthView> = {
  tag: TAG,
  noun: "container registry auth",
  list: (core) => core.registryAuths.list(),
  get: (core, id) => core.registryAuths.get(id),
  delete: (core, id) => core.registryAuths.delete(id),
  docs: {
    create: { description: "Names are unique: a second auth with the same name is refused with 400." },
    delete: { description: "Refused with 400 while a pod or template uses it." },
  },
  views: [
    {
      version: V2,
      path: "registries",
      names: { one: "Registry", many: "Registries" },
      listKey: "registries",
      schema: RegistrySchema,
      show: (_core, a) => ({ id: a.id, name: a.name }),
      create: withBody(CreateRegistrySchema, (core, body) => core.registryAuths.create(body)),
    },
    {
      version: V1,
      path: "containerregistryauth",
      idParam: "containerRegistryAuthId",
      names: { one: "ContainerRegistryAuth", many: "ContainerRegistryAuths" },
      schema: RegistryAuthSchema,
      show: (_core, a) => ({ id: a.id, name: a.name }),
      create: withBody(RegistryAuthCreateSchema, (core, body) => core.registryAuths.create(body)),
    },
  ],
};

export function registryAuthRoutes(core: ViewContext, router: OpenAPIHono<AppEnv>): void {
  delegationRoutes(core, router);
  serveResource(core, router, registryAuthsResource);
}
