import { accountGraphQL } from "./graphql.js";
import type { ServiceDef, BuildReach } from "../shared/service.js";
import { accountRoutes } from "./v2.js";
import { SshKeys } from "./model.js";

const collections = { v2: ["account"] } as const;

/** The account's settings: its SSH public keys (`/v2/account/ssh-keys`). */
export const account: ServiceDef<"account", { sshKeys: SshKeys }, typeof collections> = {
  name: "account",
  collections,
  graphql: accountGraphQL,
  build: (ctx: BuildReach<{ storage: "documents"; engine: "clock" }>) => ({ sshKeys: new SshKeys({ store: ctx.documents("ssh-keys"), clock: ctx.engine.clock }) }),
  routes: (app, views) => accountRoutes(views, app),
};
