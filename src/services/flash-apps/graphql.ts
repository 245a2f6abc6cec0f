import { authed, type GraphQLPart } from "../shared/graphql.js";
import type { FlashApp } from "./model.js";
import type { ViewContext } from "../shared/service.js";

/**
 * Flash apps as runpod-flash and the SDK 2.x query and make them (`flashAppByName`, `flashApp`,
 * `myself { flashApps }`, `createFlashApp`, `deleteFlashApp`); their environments and builds are
 * fields those services add to `FlashApp`.
 */
const typeDefs = /* GraphQL */ `
type FlashApp {
  id: String!
  name: String!
  createdAt: String
}
input CreateFlashAppInput { name: String! }
extend type User { flashApps: [FlashApp!]! }
extend type Query {
  flashApp(flashAppId: String!): FlashApp
  """Answers an error saying "not found" when there is no app of that name (the clients create it then)."""
  flashAppByName(flashAppName: String!): FlashApp
}
extend type Mutation {
  createFlashApp(input: CreateFlashAppInput!): FlashApp
  """Deletes the app with its environments (and their endpoints) and builds."""
  deleteFlashApp(flashAppId: String!): Void
}
`;

/** A Flash app as the GraphQL API shows it. */
const show = (a: FlashApp) => ({ id: a.id, name: a.name, createdAt: new Date(a.createdAt).toISOString() });

/** The Flash apps' part of the GraphQL API. */
export const flashAppsGraphQL: GraphQLPart<Pick<ViewContext, "flashApps">> = {
  typeDefs,
  resolvers: (core) => ({
    User: { flashApps: authed(() => core.flashApps.list().map(show)) },
    Query: {
      flashApp: authed<{ flashAppId: string }, unknown>(({ flashAppId }) => show(core.flashApps.get(flashAppId))),
      flashAppByName: authed<{ flashAppName: string }, unknown>(({ flashAppName }) => show(core.flashApps.byName(flashAppName))),
    },
    Mutation: {
      createFlashApp: authed<{ input: { name: string } }, unknown>(({ input }) => show(core.flashApps.create(input.name))),
      deleteFlashApp: authed<{ flashAppId: string }, null>(({ flashAppId }) => (core.flashApps.delete(flashAppId), null)),
    },
  }),
};
