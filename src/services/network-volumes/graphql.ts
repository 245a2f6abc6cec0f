import { authed, type GraphQLPart } from "../shared/graphql.js";
import type { NetworkVolume } from "./model.js";

/** Network volumes as the GraphQL API shows them (`myself { networkVolumes }`): those of `/v2/network-volumes`. */
const typeDefs = /* GraphQL */ `
type NetworkVolume { id: String!  name: String  size: Int  dataCenterId: String }
extend type User { networkVolumes: [NetworkVolume!]! }
`;

/** A network volume as the GraphQL API shows it. */
export const toGraphQLVolume = (v: NetworkVolume) => ({ id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenter });

/** The network volumes' part of the GraphQL API. */
export const networkVolumesGraphQL: GraphQLPart = {
  typeDefs,
  resolvers: ({ networkVolumes }) => ({ User: { networkVolumes: authed(() => networkVolumes.list().map(toGraphQLVolume)) } }),
};
