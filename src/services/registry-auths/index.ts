import { REGISTRY_AUTHS_CONFIG } from "./config.js";
import { configRegistryAuthId } from "../shared/config-id.js";
import { registryAuthsGraphQL } from "./graphql.js";
import { documentsOf, type ServiceDef, type BuildReach, type SeedReach } from "../shared/service.js";
import { DelegationService, type EcrDelegation } from "./delegations.js";
import { RegistryAuthService, type RegistryAuth } from "./model.js";
import { resource, serveResource } from "../shared/rest.js";
import { delegationRoutes } from "./delegations-rest.js";
import { registryAuthV1 } from "./v1.js";
import { registryAuthV2 } from "./v2.js";
import type { ViewContext } from "../shared/service.js";

const collections = { v1: ["containerregistryauth"], v2: ["registries"] } as const;

/**
 * Container registry auths (`/v2/registries`, `/v1/containerregistryauth`; passwords never leave
 * the store) and ECR pull delegations (`/v2/registries/delegations`); the config's
 * `containerRegistryAuths`.
 */
export const registryAuths: ServiceDef<"registry-auths", { registryAuths: RegistryAuthService; delegations: DelegationService }, typeof collections, typeof REGISTRY_AUTHS_CONFIG> = {
  name: "registry-auths",
  config: REGISTRY_AUTHS_CONFIG,
  collections,
  graphql: registryAuthsGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock"; services: "pods" | "templates" }>) => {
    const { services, engine } = ctx;
    const registryAuths = new RegistryAuthService({
      clock: engine.clock,
      store: ctx.documents<RegistryAuth>("registry-auth"),
      // Pods are built after registry auths: this runs on requests only.
      usedBy: (id) => services.pods.usingRegistryAuth(id) ?? templateUsing(services.templates.list(), id),
    });
    const delegations = new DelegationService(documentsOf<EcrDelegation>(ctx, "ecr-delegation"));
    return { registryAuths, delegations };
  },
  routes: (app, views) => {
    // Before the auths' routes: /v2/registries/delegations is not a registry's id.
    delegationRoutes(views, app);
    // Container registry credentials on both REST versions.
    serveResource(views, app, resource("Container registry auths", "container registry auth", (core: Pick<ViewContext, "registryAuths">) => core.registryAuths, {
      docs: {
        create: { description: "Names are unique: a second auth with the same name is refused with 400." },
        delete: { description: "Refused with 400 while a pod or template uses it." },
      },
      views: [registryAuthV2, registryAuthV1],
    }));
  },
  seed: ({ registryAuths }, { config, atField }: SeedReach<{ storage: "atField"; config: "containerRegistryAuths" }>) => {
    for (const [i, a] of config.containerRegistryAuths.entries()) {
      const id = configRegistryAuthId(a);
      // An auth of that name made through the API since stands in for the declared one.
      if (!registryAuths.exists(id) && !registryAuths.byName(a.name)) atField(`containerRegistryAuths[${i}]`, () => registryAuths.create(a, id));
    }
  },
};

function templateUsing(templates: ReadonlyArray<{ id: string; containerRegistryAuthId?: string | undefined }>, authId: string): string | undefined {
  const t = templates.find((t) => t.containerRegistryAuthId === authId);
  return t ? `template "${t.id}"` : undefined;
}
