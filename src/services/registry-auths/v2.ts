import { z } from "@hono/zod-openapi";
import type { RegistryAuthView } from "./model.js";
import { V2, withBody, view } from "../shared/rest.js";
import type { ViewContext } from "../shared/service.js";

/** v2 Registry: the same as v1's, under another name. */
export const RegistryAuthV2Schema = z.object({ id: z.string(), name: z.string() }).openapi("Registry");

/** v2 CreateRegistryRequest: the same fields as v1's, the body closed. */
export const CreateRegistryAuthV2Schema = z
  .strictObject({ name: z.string().min(1), username: z.string().min(1), password: z.string().min(1).openapi({ description: "Stored; never returned, logged or exported" }) })
  .openapi("CreateRegistryRequest");

/** `/v2/registries`: neither the username nor the password is shown. */
export const registryAuthV2 = view<RegistryAuthView, Pick<ViewContext, "registryAuths">>(V2, "registries", "Registry", RegistryAuthV2Schema, (_core, a) => ({ id: a.id, name: a.name }), {
  plural: "Registries",
  create: withBody(CreateRegistryAuthV2Schema, (core, body) => core.registryAuths.create(body)),
});
