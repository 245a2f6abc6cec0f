import { authed, type GraphQLPart } from "../shared/graphql.js";
import type { ViewContext } from "../shared/service.js";

/**
 * Secrets as the GraphQL API shows them (`myself { secrets }`, `secretCreate`, `secretDelete`,
 * as the SDK 2.x's `rp secret` and its `Secret(...)` env values send them). The value is never shown.
 */
const typeDefs = /* GraphQL */ `
type Secret { id: ID!  name: String!  description: String  createdAt: String }
input SecretCreateInput { name: String!  value: String!  description: String }
extend type User { secrets: [Secret!]! }
extend type Mutation {
  secretCreate(input: SecretCreateInput!): Secret
  secretDelete(id: ID!): Void
}
`;

/** The secrets' part of the GraphQL API. */
export const secretsGraphQL: GraphQLPart<Pick<ViewContext, "secrets">> = {
  typeDefs,
  resolvers: ({ secrets }) => ({
    User: { secrets: authed(() => secrets.list()) },
    Mutation: {
      secretCreate: authed<{ input: { name: string; value: string; description?: string | null } }, unknown>(({ input }) => secrets.create(input)),
      secretDelete: authed<{ id: string }, null>(({ id }) => {
        secrets.delete(id);
        return null;
      }),
    },
  }),
};
