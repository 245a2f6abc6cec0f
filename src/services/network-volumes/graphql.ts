import { authed, badInput, type GraphQLPart } from "../shared/graphql.js";
import type { NetworkVolume } from "./model.js";
import type { ViewContext } from "../shared/service.js";

/**
 * Network volumes as the GraphQL API shows them (`myself { networkVolumes }`, `createNetworkVolume`
 * as the SDK 2.x sends it for a `Volume`): those of `/v2/network-volumes`.
 */
const typeDefs = /* GraphQL */ `
type NetworkVolume { id: String!  name: String  size: Int  dataCenterId: String }
input CreateNetworkVolumeInput { name: String!  size: Int!  dataCenterId: String! }
extend type User { networkVolumes: [NetworkVolume!]! }
extend type Mutation { createNetworkVolume(input: CreateNetworkVolumeInput!): NetworkVolume }
`;

/** A network volume as the GraphQL API shows it. */
export const toGraphQLVolume = (v: NetworkVolume) => ({ id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenter });

/** The network volumes' part of the GraphQL API. */
export const networkVolumesGraphQL: GraphQLPart<Pick<ViewContext, "networkVolumes">> = {
  typeDefs,
  resolvers: ({ networkVolumes }) => ({
    User: { networkVolumes: authed(() => networkVolumes.list().map(toGraphQLVolume)) },
    Mutation: {
      createNetworkVolume: authed<{ input: { name: string; size: number; dataCenterId: string } }, unknown>(({ input }) => {
        if (!input.dataCenterId) throw badInput(["dataCenterId: expected a data center id such as EU-RO-1"]);
        return toGraphQLVolume(networkVolumes.create({ name: input.name, size: input.size, dataCenter: input.dataCenterId }, { dataCenter: "dataCenterId" }));
      }),
    },
  }),
};
