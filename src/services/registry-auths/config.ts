import { z } from "zod";
import type { ConfigPart } from "../../config/part.js";
import { configRegistryAuthId, resourceId } from "../shared/config-id.js";

export const RegistryAuthConfigSchema = z.strictObject({
  id: resourceId("Container registry auth").optional().describe("Default: derived from the name, the same at every start"),
  name: z.string().min(1).describe("Unique among container registry auths"),
  username: z.string().min(1),
  password: z.string().min(1).describe("Stored; never returned, logged or exported"),
});
export type RegistryAuthConfig = z.infer<typeof RegistryAuthConfigSchema>;

/** The registry auths' part of the config. */
export const REGISTRY_AUTHS_CONFIG = {
  fields: {
    containerRegistryAuths: z.array(RegistryAuthConfigSchema).default([]).describe("Container registry auths of /v1/containerregistryauth"),
  },
  check: checkRegistryAuthsConfig,
} satisfies ConfigPart;

/** Cross-checks: unique names and ids. */
function checkRegistryAuthsConfig(config: { containerRegistryAuths: RegistryAuthConfig[] }, ctx: z.RefinementCtx): void {
  const ids = new Set<string>();
  const names = new Set<string>();
  config.containerRegistryAuths.forEach((a, i) => {
    const id = configRegistryAuthId(a);
    if (names.has(a.name)) ctx.addIssue({ code: "custom", message: `duplicate container registry auth name "${a.name}"; names are unique`, path: ["containerRegistryAuths", i, "name"] });
    else if (ids.has(id)) ctx.addIssue({ code: "custom", message: `duplicate container registry auth id "${id}"`, path: ["containerRegistryAuths", i, "id"] });
    ids.add(id);
    names.add(a.name);
  });
}
