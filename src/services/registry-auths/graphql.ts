import { authed, badInput, type GraphQLPart } from "../shared/graphql.js";
import type { ViewContext } from "../shared/service.js";

/**
 * Container registry auths as the GraphQL API shows them (`saveRegistryAuth`, `updateRegistryAuth`,
 * `deleteRegistryAuth`, `myself { containerRegistryCreds }`): those of `/v2/registries`. The
 * username and password are never shown.
 */
const typeDefs = /* GraphQL */ `
type ContainerRegistryAuth { id: String!  name: String! }
input SaveRegistryAuthInput { name: String!  username: String!  password: String! }
input UpdateRegistryAuthInput { id: String!  username: String!  password: String! }
extend type User { containerRegistryCreds: [ContainerRegistryAuth!]! }
extend type Mutation {
  saveRegistryAuth(input: SaveRegistryAuthInput): ContainerRegistryAuth
  updateRegistryAuth(input: UpdateRegistryAuthInput): ContainerRegistryAuth
  deleteRegistryAuth(registryAuthId: String!): Void
}
`;

type Input<T> = { input?: T | null };

/** The input's strings, each non-empty (as the REST bodies require). */
function filled<T extends Record<string, string>>(input: T | null | undefined, keys: ReadonlyArray<keyof T & string>): T {
  const empty = keys.filter((k) => !input?.[k]);
  if (!input || empty.length) throw badInput(empty.map((k) => `${k}: expected a non-empty string`));
  return input;
}

/** The registry auths' part of the GraphQL API. */
export const registryAuthsGraphQL: GraphQLPart<Pick<ViewContext, "registryAuths">> = {
  typeDefs,
  resolvers: ({ registryAuths }) => ({
    User: { containerRegistryCreds: authed(() => registryAuths.list()) },
    Mutation: {
      saveRegistryAuth: authed<Input<{ name: string; username: string; password: string }>, unknown>(({ input }) => registryAuths.create(filled(input, ["name", "username", "password"]))),
      updateRegistryAuth: authed<Input<{ id: string; username: string; password: string }>, unknown>(({ input }) =>
        registryAuths.changeCredentials(input?.id ?? "", filled(input, ["username", "password"])),
      ),
      deleteRegistryAuth: authed<{ registryAuthId: string }, null>(({ registryAuthId }) => {
        registryAuths.delete(registryAuthId);
        return null;
      }),
    },
  }),
};
