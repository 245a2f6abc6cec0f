import { z } from "@hono/zod-openapi";
import type { RegistryAuthView } from "./model.js";
import { V1, withBody, view } from "../shared/rest.js";
import type { ViewContext } from "../shared/service.js";

/** v1 ContainerRegistryAuth: the password (and username) are never shown. */
export const RegistryAuthV1Schema = z.object({ id: z.string(), name: z.string().openapi({ example: "my creds" }) }).openapi("ContainerRegistryAuth");

export const CreateRegistryAuthV1Schema = z
  .object({
    name: z.string().min(1).openapi({ description: "Unique among container registry auths", example: "my creds" }),
    username: z.string().min(1).openapi({ example: "my-username" }),
    password: z.string().min(1).openapi({ description: "Stored; never returned, logged or exported", example: "my-password" }),
  })
  .openapi("ContainerRegistryAuthCreateInput");

/** What the view reads: the registry auths. */
type Reads = Pick<ViewContext, "registryAuths">;

/** `/v1/containerregistryauth`: neither the username nor the password is shown. */
export const registryAuthV1 = view<RegistryAuthView, Reads>(V1, "containerregistryauth", "ContainerRegistryAuth", RegistryAuthV1Schema, (_core, a) => ({ id: a.id, name: a.name }), {
  create: withBody(CreateRegistryAuthV1Schema, (core, body) => core.registryAuths.create(body)),
});
