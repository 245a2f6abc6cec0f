import { documentsOf, type ServiceDef, type BuildReach } from "../shared/service.js";
import { secretsGraphQL } from "./graphql.js";
import { SecretService, type Secret } from "./model.js";

// What other services and the wiring use of this one.
export { type SecretService } from "./model.js";

const collections = { v2: [] } as const;

/**
 * The account's secrets, on the GraphQL API only (`secretCreate`, `secretDelete`,
 * `myself { secrets }`); their values reach worker processes through `{{ RUNPOD_SECRET_<name> }}`
 * in an endpoint's env, and no answer shows them.
 */
export const secrets: ServiceDef<"secrets", { secrets: SecretService }, typeof collections> = {
  name: "secrets",
  collections,
  graphql: secretsGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock" }>) => ({ secrets: new SecretService(documentsOf<Secret>(ctx, "secret")) }),
};
