import { CPU_FLAVOR_IDS, DATA_CENTER_IDS } from "../shared/catalog/catalog.js";
import { DATA_CENTERS } from "../shared/catalog/datacenter-catalog.js";
import { GPU_POOLS, GPU_TYPES, poolTypes, type GpuTypeInfo } from "../shared/catalog/gpu-catalog.js";
import type { GraphQLPart } from "../shared/graphql.js";
import { gpuHourly } from "../shared/pricing.js";
import { gpuAvailability } from "./availability.js";
import { hubIds, type HubListingConfig } from "./config.js";
import type { ViewContext } from "../shared/service.js";

/**
 * The catalog as the GraphQL API shows it, public (no key needed, as on the service): `gpuTypes`
 * with prices and `lowestPrice` stock, `dataCenters`, `serverlessGpuPools`, from the same tables
 * and the same availability rule as `/v2/catalog`; the Hub's `listings` are those the config's `hub`
 * declares; the public endpoints catalogue (`allAiApiPublicConfigs`) is empty here.
 */
const typeDefs = /* GraphQL */ `
type GpuTypeCudaVersion { cudaVersion: String!  availability: String! }
type LowestPrice {
  gpuName: String  gpuTypeId: String  minimumBidPrice: Float  uninterruptablePrice: Float  minMemory: Int  minVcpu: Int
  """High when offered, null when not (minipod never runs short)."""
  stockStatus: String
  maxUnreservedGpuCount: Int  availableGpuCounts: [Int!]  gpuTypeCudaVersions: [GpuTypeCudaVersion!]
}
type GpuType {
  id: String!  displayName: String  manufacturer: String  memoryInGb: Int  cudaCores: Int  secureCloud: Boolean  communityCloud: Boolean
  securePrice: Float  communityPrice: Float  secureSpotPrice: Float  communitySpotPrice: Float
  oneWeekPrice: Float  oneMonthPrice: Float  threeMonthPrice: Float  sixMonthPrice: Float
  maxGpuCount: Int  maxGpuCountSecureCloud: Int  maxGpuCountCommunityCloud: Int  pool: String
  lowestPrice(input: GpuLowestPriceInput): LowestPrice
}
input GpuTypeFilter { id: String  ids: [String!] }
input GpuLowestPriceInput {
  gpuCount: Int  minMemoryInGb: Int  minVcpuCount: Int  secureCloud: Boolean  totalDisk: Int  minDisk: Int  allowedCudaVersions: [String!]
  minCudaVersion: String  dataCenterId: String  countryCode: String  minDownload: Int  minUpload: Int  supportPublicIp: Boolean
  includeAiApi: Boolean  compliance: [String!]  globalNetwork: Boolean
}
type DataCenterGpuAvailability { gpuTypeId: String!  displayName: String  stockStatus: String  available: Boolean }
type DataCenter {
  id: String!  name: String  location: String  region: String  listed: Boolean  storageSupport: Boolean
  globalNetwork: Boolean  compliance: [String!]  gpuAvailability: [DataCenterGpuAvailability!]!
}
type ServerlessGpuPool { id: String!  gpuTypeIds: [String!]! }

type ListingBuild { id: String  imageName: String }
type ListingRelease { id: String  name: String  tagName: String  createdAt: String  config: String  build: ListingBuild }
type Listing {
  id: String!  repoId: String  title: String  description: String  repoName: String  repoOwner: String  createdAt: String
  updatedAt: String  views: Int  stars: Int  deploys: Int  language: String  category: String  tags: [String!]  type: String
  listedRelease: ListingRelease
}
input ListingsInput {
  searchQuery: String  category: String  owner: String  limit: Int  offset: Int  orderBy: String  orderDirection: String
}
type AiApiPublicConfig {
  id: String!  aiApiId: String  modelName: String  displayName: String  description: String  metadata: String
  isLive: Boolean  createdAt: String  updatedAt: String
}

"""A CPU flavor (cpu3c, cpu3g, cpu5c, cpu5g); specifics: the stock of one instance in one data center."""
type CpuFlavor { id: String!  displayName: String  specifics(input: SpecificsInput): CpuSpecifics }
type CpuSpecifics { stockStatus: String }
input CpuFlavorInput { id: String }
input SpecificsInput { dataCenterId: String  instanceId: String }

extend type Query {
  gpuTypes(input: GpuTypeFilter): [GpuType!]!
  cpuFlavors(input: CpuFlavorInput): [CpuFlavor!]!
  dataCenters: [DataCenter!]!
  serverlessGpuPools: [ServerlessGpuPool!]!
  """The Hub's listings: those of the config's hub."""
  listings(input: ListingsInput): [Listing!]!
  """The public endpoints catalogue: none here."""
  allAiApiPublicConfigs: [AiApiPublicConfig!]!
}
`;

/** A configured Hub listing as the service's `listings` shows it. */
function listing(l: HubListingConfig) {
  const ids = hubIds(l);
  const [owner, name] = l.repo.split("/") as [string, string];
  return {
    id: ids.listing,
    repoId: ids.listing,
    title: l.title ?? name,
    description: l.description,
    repoName: name,
    repoOwner: owner,
    createdAt: null,
    updatedAt: null,
    views: 0,
    stars: 0,
    deploys: l.deploys,
    language: null,
    category: l.category,
    tags: l.tags,
    type: l.type,
    listedRelease: { id: ids.release, name: l.tagName, tagName: l.tagName, createdAt: null, config: JSON.stringify(l.config), build: { id: ids.release, imageName: l.imageName } },
  };
}

interface ListingsInput {
  searchQuery?: string | null;
  category?: string | null;
  owner?: string | null;
  limit?: number | null;
  offset?: number | null;
}

/** The listings a search asks for: words of the title, description, repo or tags; then a page. */
function listings(hub: readonly HubListingConfig[], i: ListingsInput) {
  const term = i.searchQuery?.toLowerCase();
  const kept = hub
    .map(listing)
    .filter((l) => !term || [l.title, l.description, l.repoName, l.repoOwner, ...l.tags].some((f) => f.toLowerCase().includes(term)))
    .filter((l) => !i.category || l.category.toLowerCase() === i.category.toLowerCase())
    .filter((l) => !i.owner || l.repoOwner.toLowerCase() === i.owner.toLowerCase());
  const offset = Math.max(0, i.offset ?? 0);
  return kept.slice(offset, i.limit !== null && i.limit !== undefined && i.limit >= 0 ? offset + i.limit : undefined);
}

interface LowestPriceInput {
  gpuCount?: number | null;
  secureCloud?: boolean | null;
  allowedCudaVersions?: string[] | null;
  minCudaVersion?: string | null;
  countryCode?: string | null;
}

/** The catalog's part of the GraphQL API. */
export const catalogGraphQL: GraphQLPart<Pick<ViewContext, "prices" | "hub">> = {
  typeDefs,
  // The catalog's real sizes, for the query cost (660 aliases of gpuTypes { lowestPrice } once took
  // 0.7 s); lowestPrice looks at the stock of both clouds, about 15 times a plain field's CPU.
  cost: {
    "Query.gpuTypes": { items: GPU_TYPES.length },
    "Query.dataCenters": { items: DATA_CENTERS.length },
    "Query.serverlessGpuPools": { items: GPU_POOLS.length },
    "Query.cpuFlavors": { items: CPU_FLAVOR_IDS.length },
    "DataCenter.gpuAvailability": { items: GPU_TYPES.length },
    "ServerlessGpuPool.gpuTypeIds": { items: Math.max(...GPU_POOLS.map((p) => poolTypes(p).length)) },
    "GpuType.lowestPrice": { weight: 15 },
  },
  resolvers: ({ prices, hub }) => {
    const lowest = (g: GpuTypeInfo, i: LowestPriceInput = {}) => {
      const count = i.gpuCount ?? 1;
      // Without secureCloud, either cloud may have it, as the service looks at both.
      const clouds = i.secureCloud ? (["SECURE"] as const) : (["SECURE", "COMMUNITY"] as const);
      const q = {
        product: ["POD" as const],
        count,
        cudaVersions: i.allowedCudaVersions?.length ? i.allowedCudaVersions : undefined,
        minCudaVersion: i.minCudaVersion ?? undefined,
        countryCodes: i.countryCode ? [i.countryCode] : undefined,
      };
      const found = clouds.map((cloud) => gpuAvailability(g, { ...q, cloud }));
      const offered = found.find((a) => a.availability === "HIGH");
      const price = gpuHourly(prices, g.id) * count;
      const cudas = (offered ?? found[0])?.cudaVersions ?? [];
      return {
        gpuName: g.name,
        gpuTypeId: g.id,
        minimumBidPrice: offered ? price : null,
        uninterruptablePrice: offered ? price : null,
        minMemory: null,
        minVcpu: null,
        stockStatus: offered ? "High" : null,
        maxUnreservedGpuCount: Math.max(g.maxCount.secure, g.maxCount.community),
        availableGpuCounts: [1, 2, 4, 8].filter((n) => n <= Math.max(g.maxCount.secure, g.maxCount.community)),
        gpuTypeCudaVersions: cudas.map((c) => ({ cudaVersion: c.version, availability: c.available ? "AVAILABLE" : "UNAVAILABLE" })),
      };
    };
    const gpu = (g: GpuTypeInfo) => {
      const price = gpuHourly(prices, g.id);
      const secure = g.maxCount.secure > 0;
      const community = g.maxCount.community > 0;
      return {
        id: g.id,
        displayName: g.name,
        manufacturer: g.manufacturer,
        memoryInGb: g.memoryGb,
        cudaCores: null,
        secureCloud: secure,
        communityCloud: community,
        securePrice: secure ? price : null,
        communityPrice: community ? price : null,
        // Interruptible pods cost what on-demand ones do here; no savings plans.
        secureSpotPrice: secure ? price : null,
        communitySpotPrice: community ? price : null,
        oneWeekPrice: null,
        oneMonthPrice: null,
        threeMonthPrice: null,
        sixMonthPrice: null,
        maxGpuCount: Math.max(g.maxCount.secure, g.maxCount.community),
        maxGpuCountSecureCloud: g.maxCount.secure,
        maxGpuCountCommunityCloud: g.maxCount.community,
        pool: g.pool,
        info: g,
      };
    };
    return {
      Query: {
        gpuTypes: (_p, a) => {
          const f = (a as { input?: { id?: string | null; ids?: string[] | null } | null }).input;
          const ids = f?.ids?.length ? f.ids : f?.id ? [f.id] : undefined;
          return GPU_TYPES.filter((g) => !ids || ids.includes(g.id)).map(gpu);
        },
        dataCenters: () =>
          DATA_CENTERS.map((d) => ({
            id: d.id,
            name: d.name,
            location: d.name,
            region: d.region,
            listed: true,
            storageSupport: true,
            globalNetwork: d.globalNetwork,
            compliance: d.compliance,
            gpuAvailability: GPU_TYPES.map((g) => ({ gpuTypeId: g.id, displayName: g.name, stockStatus: "High", available: true })),
          })),
        serverlessGpuPools: () => GPU_POOLS.map((id) => ({ id, gpuTypeIds: poolTypes(id) })),
        cpuFlavors: (_p, a) => {
          const id = (a as { input?: { id?: string | null } | null }).input?.id;
          return CPU_FLAVOR_IDS.filter((f) => !id || f === id).map((f) => ({ id: f, displayName: f }));
        },
        listings: (_p, a) => listings(hub, (a as { input?: ListingsInput | null }).input ?? {}),
        allAiApiPublicConfigs: () => [],
      },
      // Never short, as GPU stock: High for an instance of the flavor (<flavor>-<vCPUs>-<GB>) in a data center minipod has.
      CpuFlavor: {
        specifics: (parent, a) => {
          const i = (a as { input?: { dataCenterId?: string | null; instanceId?: string | null } | null }).input ?? {};
          const flavor = (parent as { id: string }).id;
          const placed = !i.dataCenterId || (DATA_CENTER_IDS as readonly string[]).includes(i.dataCenterId);
          const instance = !i.instanceId || new RegExp(`^${flavor}-\\d+(-\\d+)?$`).test(i.instanceId);
          return { stockStatus: placed && instance ? "High" : null };
        },
      },
      GpuType: { lowestPrice: (parent, a) => lowest((parent as { info: GpuTypeInfo }).info, (a as { input?: LowestPriceInput | null }).input ?? {}) },
    };
  },
};

