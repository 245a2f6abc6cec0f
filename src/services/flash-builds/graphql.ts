import { GraphQLError } from "graphql";
import { authed, signedIn, type GraphQLCaller, type GraphQLPart } from "../shared/graphql.js";
import type { FlashArtifact, FlashBuild } from "./model.js";
import type { ViewContext } from "../shared/service.js";

/**
 * Flash builds as the clients make them: `prepareFlashArtifactUpload` (an upload URL of minipod's
 * own, which takes the PUT), `finalizeFlashArtifactUpload` (the build), `flashBuild`,
 * `updateFlashBuildManifest`, and the builds of an app (`FlashApp.flashBuilds`).
 */
const typeDefs = /* GraphQL */ `
type FlashBuild { id: String!  objectKey: String  createdAt: String  manifest: JSON }
type FlashArtifactUpload { uploadUrl: String!  objectKey: String!  expiresAt: String }
extend type FlashApp { flashBuilds: [FlashBuild!]! }
input PrepareFlashArtifactUploadInput { flashAppId: String!  tarballSize: Float! }
input FinalizeFlashArtifactUploadInput { flashAppId: String!  objectKey: String!  manifest: JSON }
input UpdateFlashBuildManifestInput { flashBuildId: String!  manifest: JSON }
extend type Query { flashBuild(flashBuildId: String!): FlashBuild }
extend type Mutation {
  """An URL of minipod's that takes the artifact's PUT (no key), for tarballSize bytes, for an hour."""
  prepareFlashArtifactUpload(input: PrepareFlashArtifactUploadInput!): FlashArtifactUpload
  finalizeFlashArtifactUpload(input: FinalizeFlashArtifactUploadInput!): FlashBuild
  updateFlashBuildManifest(input: UpdateFlashBuildManifestInput!): FlashBuild
}
`;

/** Where an artifact is sent and fetched: minipod's own route, on the origin the client used. */
export const artifactPath = (objectKey: string): string => `/flash/artifacts/${encodeURIComponent(objectKey)}`;

const originOf = (caller: GraphQLCaller): string => {
  if (!caller.origin) throw new GraphQLError("minipod cannot tell its own address for the upload URL: send the request over HTTP");
  return caller.origin;
};

/** A build as the GraphQL API shows it. */
export const toGraphQLBuild = (b: FlashBuild) => ({ id: b.id, objectKey: b.objectKey, createdAt: new Date(b.createdAt).toISOString(), manifest: b.manifest });

const upload = (a: FlashArtifact, origin: string) => ({ uploadUrl: `${origin}${artifactPath(a.id)}`, objectKey: a.id, expiresAt: new Date(a.expiresAt).toISOString() });

/** The Flash builds' part of the GraphQL API. */
export const flashBuildsGraphQL: GraphQLPart<Pick<ViewContext, "flashBuilds">> = {
  typeDefs,
  resolvers: ({ flashBuilds }) => ({
    FlashApp: { flashBuilds: (parent) => flashBuilds.ofApp((parent as { id: string }).id).map(toGraphQLBuild) },
    Query: { flashBuild: authed<{ flashBuildId: string }, unknown>(({ flashBuildId }) => toGraphQLBuild(flashBuilds.get(flashBuildId))) },
    Mutation: {
      prepareFlashArtifactUpload: (_parent, args, caller) => {
        signedIn(caller);
        const { input } = args as { input: { flashAppId: string; tarballSize: number } };
        return upload(flashBuilds.prepare(input.flashAppId, input.tarballSize), originOf(caller));
      },
      finalizeFlashArtifactUpload: authed<{ input: { flashAppId: string; objectKey: string; manifest?: unknown } }, unknown>(({ input }) =>
        toGraphQLBuild(flashBuilds.finalize(input.flashAppId, input.objectKey, input.manifest)),
      ),
      updateFlashBuildManifest: authed<{ input: { flashBuildId: string; manifest?: unknown } }, unknown>(({ input }) =>
        toGraphQLBuild(flashBuilds.updateManifest(input.flashBuildId, input.manifest)),
      ),
    },
  }),
};
