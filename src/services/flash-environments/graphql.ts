import { authed, signedIn, type FieldResolver, type GraphQLPart } from "../shared/graphql.js";
import type { ViewContext } from "../shared/service.js";
import { artifactPath } from "../flash-builds/index.js";
import type { FlashEnvironment } from "./model.js";

/**
 * Flash environments as the clients query and make them (`flashEnvironment`,
 * `flashEnvironmentByName`, `FlashApp.flashEnvironments`, `createFlashEnvironment`,
 * `deleteFlashEnvironment`), and `deployBuildToEnvironment`, which makes a build the active one.
 */
const typeDefs = /* GraphQL */ `
type FlashEnvironmentEndpoint { id: String!  name: String! }
type FlashEnvironmentVolume { id: String!  name: String }
type FlashArtifact { objectKey: String!  downloadUrl: String  expiresAt: String }
type FlashEnvironment {
  id: String!
  name: String!
  """HEALTHY once a build is deployed to it, PENDING before."""
  state: String
  activeBuildId: String
  createdAt: String
  """The endpoints saved with its flashEnvironmentId."""
  endpoints: [FlashEnvironmentEndpoint!]!
  networkVolumes: [FlashEnvironmentVolume!]!
  activeArtifact: FlashArtifact
}
extend type FlashApp { flashEnvironments: [FlashEnvironment!]! }
input CreateFlashEnvironmentInput { flashAppId: String!  name: String! }
input FlashEnvironmentByNameInput { flashAppId: String!  name: String! }
input DeployBuildToEnvironmentInput { flashEnvironmentId: String!  flashBuildId: String! }
extend type Query {
  flashEnvironment(flashEnvironmentId: String!): FlashEnvironment
  """Answers an error saying "not found" when the app has no environment of that name."""
  flashEnvironmentByName(input: FlashEnvironmentByNameInput!): FlashEnvironment
}
extend type Mutation {
  createFlashEnvironment(input: CreateFlashEnvironmentInput!): FlashEnvironment
  """Deletes the environment and its endpoints."""
  deleteFlashEnvironment(flashEnvironmentId: String!): Void
  """Makes the build the environment's active one: its endpoints' workers start afresh with its artifact."""
  deployBuildToEnvironment(input: DeployBuildToEnvironmentInput!): FlashEnvironment
}
`;

/** An environment as the GraphQL API shows it; `origin` builds the artifact's download URL. */
function show(core: Pick<ViewContext, "endpointManager" | "flashEnvironments" | "networkVolumes">, e: FlashEnvironment, origin: string | undefined) {
  const endpoints = core.flashEnvironments.endpoints(e.id);
  const volumeIds = new Set(endpoints.flatMap((x) => {
    const f = core.endpointManager.get(x.id).fields;
    return [...(f.networkVolumeId ? [f.networkVolumeId] : []), ...(f.networkVolumeIds ?? [])];
  }));
  const objectKey = core.flashEnvironments.activeObjectKey(e);
  return {
    id: e.id,
    name: e.name,
    state: e.activeBuildId === undefined ? "PENDING" : "HEALTHY",
    activeBuildId: e.activeBuildId ?? null,
    createdAt: new Date(e.createdAt).toISOString(),
    endpoints: endpoints.map(({ id, name }) => ({ id, name })),
    networkVolumes: [...volumeIds].filter((id) => core.networkVolumes.has(id)).map((id) => ({ id, name: core.networkVolumes.get(id).name })),
    activeArtifact: objectKey === undefined ? null : { objectKey, downloadUrl: origin === undefined ? null : `${origin}${artifactPath(objectKey)}`, expiresAt: null },
  };
}

type Args<T> = { input: T };

/** The Flash environments' part of the GraphQL API. */
export const flashEnvironmentsGraphQL: GraphQLPart<Pick<ViewContext, "flashEnvironments" | "endpointManager" | "networkVolumes">> = {
  typeDefs,
  resolvers: (core) => {
    const envs = core.flashEnvironments;
    // An environment's artifact URL is built on the origin the request came to.
    const withOrigin =
      <A>(fn: (args: A) => FlashEnvironment): FieldResolver =>
      (_parent, args, caller) => {
        signedIn(caller);
        return show(core, fn(args as A), caller.origin);
      };
    return {
      FlashApp: { flashEnvironments: (parent, _args, caller) => envs.ofApp((parent as { id: string }).id).map((e) => show(core, e, caller.origin)) },
      Query: {
        flashEnvironment: withOrigin<{ flashEnvironmentId: string }>(({ flashEnvironmentId }) => envs.get(flashEnvironmentId)),
        flashEnvironmentByName: withOrigin<Args<{ flashAppId: string; name: string }>>(({ input }) => envs.byName(input.flashAppId, input.name)),
      },
      Mutation: {
        createFlashEnvironment: withOrigin<Args<{ flashAppId: string; name: string }>>(({ input }) => envs.create(input.flashAppId, input.name)),
        deleteFlashEnvironment: authed<{ flashEnvironmentId: string }, null>(({ flashEnvironmentId }) => (envs.delete(flashEnvironmentId), null)),
        deployBuildToEnvironment: withOrigin<Args<{ flashEnvironmentId: string; flashBuildId: string }>>(({ input }) => envs.deploy(input.flashEnvironmentId, input.flashBuildId)),
      },
    };
  },
};
