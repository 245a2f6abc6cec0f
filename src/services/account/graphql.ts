import { authed, badInput, type GraphQLPart } from "../shared/graphql.js";
import { SSH_KEY, SSH_KEY_EXPECTED } from "./model.js";
import type { ViewContext } from "../shared/service.js";

/**
 * The account as the GraphQL API shows it (`myself`, `updateUserSettings`): its SSH public keys
 * are `pubKey`, one per line, the keys `/v2/account/ssh-keys` lists. minipod keeps no balance,
 * e-mail or notification settings: those fields answer fixed values.
 */
const typeDefs = /* GraphQL */ `
extend type User {
  """The account's SSH public keys, one per line."""
  pubKey: String
  email: String
  clientBalance: Float
  currentSpendPerHr: Float
  spendLimit: Float
  notifyPodsStale: Boolean
  notifyPodsGeneral: Boolean
  notifyLowBalance: Boolean
}
input UpdateUserSettingsInput { pubKey: String }
extend type Mutation { updateUserSettings(input: UpdateUserSettingsInput): User }
`;

/** The account's part of the GraphQL API. */
export const accountGraphQL: GraphQLPart<Pick<ViewContext, "sshKeys" | "pods">> = {
  typeDefs,
  resolvers: ({ sshKeys, pods }) => ({
    User: {
      pubKey: authed(() => sshKeys.list().join("\n")),
      email: () => "user@minipod.local",
      clientBalance: () => 0,
      currentSpendPerHr: authed(() => pods.list().filter((p) => p.desiredStatus === "RUNNING").reduce((sum, p) => sum + pods.costPerHr(p), 0)),
      spendLimit: () => null,
      notifyPodsStale: () => false,
      notifyPodsGeneral: () => false,
      notifyLowBalance: () => false,
    },
    Mutation: {
      // pubKey replaces every key, as PUT /v2/account/ssh-keys does.
      updateUserSettings: authed<{ input?: { pubKey?: string | null } | null }, unknown>(({ input }) => {
        if (typeof input?.pubKey === "string") {
          const keys = input.pubKey.split(/\r?\n/).map((k) => k.trim()).filter((k) => k !== "");
          const bad = keys.findIndex((k) => !SSH_KEY.test(k));
          if (bad >= 0) throw badInput([`pubKey: line ${bad + 1}: ${SSH_KEY_EXPECTED}`]);
          sshKeys.replace(keys);
        }
        return {};
      }),
    },
  }),
};
