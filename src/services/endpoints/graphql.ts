import { GraphQLScalarType } from "graphql";
import { EXECUTION_TIMEOUT_DEFAULT_MS } from "../../domain/limits.js";
import { CPU_FLAVOR_IDS, DATA_CENTER_IDS } from "../shared/catalog/catalog.js";
import { gpuSelection, typesOf } from "../shared/catalog/gpu-catalog.js";
import { argsOf, authed, badInput, commaList, conforms, envList, envRecord, given, nameScalar, type GraphQLPart } from "../shared/graphql.js";
import { UpdateEndpointV1Schema } from "./v1.js";
import { DEFAULT_GPU_TYPE_ID } from "../shared/pricing.js";
import type { ViewContext } from "../shared/service.js";
import { toGraphQLTemplate } from "../templates/index.js";
import type { ContainerChange } from "./endpoint-container.js";
import { EMULATOR_USER_ID, FLASHBOOT_MODES } from "./record.js";
import type { EndpointChange, ManagedEndpoint, NewEndpoint } from "./model.js";

/**
 * Endpoints as the GraphQL API shows them (`myself { endpoints }`, `saveEndpoint`,
 * `updateEndpointTemplate`, `deleteEndpoint`): the endpoints of `/v1/endpoints` and
 * `/v2/serverless`, through the same model, served by the queue the moment they are saved.
 */
const typeDefs = /* GraphQL */ `
"""OFF, FLASHBOOT or PRIORITY_FLASHBOOT; bare (flashBootType: FLASHBOOT) or quoted."""
scalar FlashBootType

"""Any JSON value (runpod-flash's template config: {})."""
scalar JSON

type EndpointNetworkVolume { networkVolumeId: String!  dataCenterId: String }

type Endpoint {
  id: String!
  name: String!
  templateId: String
  template: PodTemplate
  """GPU pools, comma-separated; a type of a pool left out follows it as -<type id>."""
  gpuIds: String
  gpuCount: Int
  instanceIds: [String!]
  networkVolumeId: String
  networkVolumeIds: [EndpointNetworkVolume!]
  networkVolume: NetworkVolume
  """Data center ids, comma-separated; null: any."""
  locations: String
  idleTimeout: Int
  scalerType: String
  scalerValue: Float
  workersMin: Int
  workersMax: Int
  workersStandby: Int
  allowedCudaVersions: String
  minCudaVersion: String
  flashBootType: FlashBootType
  executionTimeoutMs: Int
  """QB: queue-based; LB: load-balancing."""
  type: String
  userId: String
  version: Int
  aiKey: String
  env: [EnvironmentVariable!]
  modelReferences: [String!]
  createdAt: String
  """The Flash environment of a deployed app's endpoint; null for others."""
  flashEnvironmentId: String
  workersPFBTarget: Int
  """(sic: the service's spelling) the Flash build the endpoint runs."""
  activeBuildid: String
  idePodId: String
}

input EndpointNetworkVolumeInput { networkVolumeId: String!  dataCenterId: String }

input EndpointTemplateInput {
  name: String  imageName: String  containerDiskInGb: Int  dockerArgs: String  env: [EnvironmentVariableInput!]
  containerRegistryAuthId: String  ports: String  startScript: String  volumeInGb: Int  volumeMountPath: String
  advancedStart: Boolean  config: JSON
}

input EndpointInput {
  id: String  name: String  templateId: String  template: EndpointTemplateInput  hubReleaseId: String  type: String
  gpuIds: String  gpuCount: Int  instanceIds: [String!]  networkVolumeId: String  networkVolumeIds: [EndpointNetworkVolumeInput!]
  locations: String  idleTimeout: Int  scalerType: String  scalerValue: Float  workersMin: Int  workersMax: Int
  workersStandby: Int  allowedCudaVersions: String  minCudaVersion: String  flashBootType: FlashBootType
  executionTimeoutMs: Int  compliance: [String!]  modelReferences: [String!]  env: [EnvironmentVariableInput!]
  workersPFBTarget: Int  flashEnvironmentId: String
}

input UpdateEndpointTemplateInput { endpointId: String!  templateId: String! }

extend type User {
  endpoints: [Endpoint!]!
  endpoint(id: String!): Endpoint
}
extend type Mutation {
  saveEndpoint(input: EndpointInput): Endpoint
  updateEndpointTemplate(input: UpdateEndpointTemplateInput): Endpoint
  deleteEndpoint(id: String!): Void
}
`;

interface EndpointInput {
  id?: string | null;
  name?: string | null;
  templateId?: string | null;
  gpuIds?: string | null;
  gpuCount?: number | null;
  instanceIds?: string[] | null;
  networkVolumeId?: string | null;
  networkVolumeIds?: Array<{ networkVolumeId: string }> | null;
  locations?: string | null;
  idleTimeout?: number | null;
  scalerType?: string | null;
  scalerValue?: number | null;
  workersMin?: number | null;
  workersMax?: number | null;
  allowedCudaVersions?: string | null;
  minCudaVersion?: string | null;
  flashBootType?: string | null;
  executionTimeoutMs?: number | null;
  template?: {
    imageName?: string | null;
    containerDiskInGb?: number | null;
    dockerArgs?: string | null;
    env?: Array<{ key: string; value?: string | null }> | null;
    containerRegistryAuthId?: string | null;
    ports?: string | null;
  } | null;
  type?: string | null;
  flashEnvironmentId?: string | null;
  env?: Array<{ key: string; value?: string | null }> | null;
}

const num = (n: number | null | undefined): number | undefined => (n === null ? undefined : n);

/** `AMPERE_16,ADA_24,-NVIDIA L4` as the GPU types workers may get: pools' types minus those excluded. */
function gpuTypesOf(gpuIds: string): string[] {
  const items = commaList(gpuIds) ?? [];
  const excluded = new Set(items.filter((x) => x.startsWith("-")).map((x) => x.slice(1).trim()));
  const errors: string[] = [];
  const types = items
    .filter((x) => !x.startsWith("-"))
    .flatMap((pool) => {
      const members = typesOf(pool);
      if (!members) errors.push(`gpuIds: unknown GPU pool "${pool}"; the pools are serverlessGpuPools { id }`);
      return members ?? [];
    })
    .filter((t) => !excluded.has(t));
  if (errors.length === 0 && types.length === 0) errors.push("gpuIds: no GPU type is left in the pools given");
  if (errors.length) throw badInput(errors);
  return types;
}

/**
 * `locations` in the data centers minipod's catalog has: the SDKs send every data center the service
 * has (US-MO-1, US-NC-2... that the REST description's list lacks); those are left out while one
 * known is left; a list of none known is refused by the model, naming them.
 */
function knownLocations(ids: string[] | undefined): string[] | undefined {
  const known = ids?.filter((id) => (DATA_CENTER_IDS as readonly string[]).includes(id));
  return known?.length ? known : ids;
}

/** CPU instance ids (`cpu3c-1-2`: flavor, vCPUs, memory) as the model's CPU selection: a CPU endpoint. */
function cpuOf(instanceIds: string[] | null | undefined): Pick<EndpointChange, "computeType" | "cpu"> {
  if (!instanceIds?.length) return {};
  const errors: string[] = [];
  const cpu = instanceIds.map((id, n) => {
    const m = /^([a-z0-9]+)-(\d+)(?:-\d+)?$/.exec(id);
    if (!m || !(CPU_FLAVOR_IDS as readonly string[]).includes(m[1]!)) errors.push(`instanceIds.${n}: expected <flavor>-<vCPUs>-<memory GB> of a CPU flavor (${CPU_FLAVOR_IDS.join(", ")}), got "${id}"`);
    return { id: m?.[1] ?? id, vcpuCount: Number(m?.[2] ?? 0) };
  });
  if (errors.length) throw badInput(errors);
  return { computeType: "CPU", cpu };
}

/** The input's fields in the model's terms; what is not given stays undefined. */
function fieldsOf(i: EndpointInput): EndpointChange {
  if (i.type && i.type !== "QB" && i.type !== "LB") throw badInput([`type: expected QB (queue-based) or LB (load-balancing), not "${i.type}"`]);
  const volumes = i.networkVolumeIds?.map((v) => v.networkVolumeId);
  const allowed = commaList(i.allowedCudaVersions);
  return {
    name: given(i.name),
    gpuTypeIds: given(i.gpuIds) ? gpuTypesOf(i.gpuIds!) : undefined,
    gpuCount: num(i.gpuCount),
    networkVolumeId: given(i.networkVolumeId),
    networkVolumeIds: volumes?.length ? volumes : undefined,
    dataCenterIds: knownLocations(commaList(i.locations)),
    idleTimeout: num(i.idleTimeout),
    scalerType: given(i.scalerType) as EndpointChange["scalerType"],
    scalerValue: num(i.scalerValue),
    workersMin: num(i.workersMin),
    workersMax: num(i.workersMax),
    allowedCudaVersions: allowed,
    // The Hub's deploy sends both; they exclude each other in the model (the set is the finer one).
    minCudaVersion: allowed ? undefined : given(i.minCudaVersion),
    flashboot: (given(i.flashBootType) as EndpointChange["flashboot"]) ?? undefined,
    // 0, as the SDKs send it, is "the service's default".
    executionTimeoutMs: i.executionTimeoutMs === 0 ? undefined : num(i.executionTimeoutMs),
    env: envRecord(i.env),
    flashEnvironmentId: given(i.flashEnvironmentId),
    ...cpuOf(i.instanceIds),
  };
}

function containerOf(t: NonNullable<EndpointInput["template"]>): ContainerChange {
  return {
    imageName: given(t.imageName),
    containerDiskInGb: num(t.containerDiskInGb),
    dockerStartCmd: argsOf(t.dockerArgs),
    env: envRecord(t.env),
    containerRegistryAuthId: given(t.containerRegistryAuthId),
    ports: t.ports === null || t.ports === undefined ? undefined : (commaList(t.ports) ?? []),
  };
}

/** An endpoint as the GraphQL API shows it. */
export function toGraphQLEndpoint(core: Pick<ViewContext, "networkVolumes" | "templates">, { spec, fields }: ManagedEndpoint): Record<string, unknown> {
  const { pools, excludedTypes } = gpuSelection(fields.gpuTypeIds.length ? fields.gpuTypeIds : [DEFAULT_GPU_TYPE_ID]);
  const anywhere = fields.dataCenterIds.length === DATA_CENTER_IDS.length;
  const volume = fields.networkVolumeId !== undefined && core.networkVolumes.has(fields.networkVolumeId) ? core.networkVolumes.get(fields.networkVolumeId) : undefined;
  const template = fields.templateId === undefined ? undefined : core.templates.find(fields.templateId);
  return {
    id: spec.id,
    name: spec.name,
    templateId: fields.templateId ?? null,
    template: template ? toGraphQLTemplate(template) : null,
    gpuIds: fields.computeType === "GPU" ? [...pools, ...excludedTypes.map((t) => `-${t}`)].join(",") : null,
    gpuCount: fields.gpuCount,
    // <flavor>-<vCPUs>-<memory GB>: general-purpose flavors (…g) have 4 GB a vCPU, compute ones (…c) 2.
    instanceIds: fields.computeType === "CPU" ? (fields.cpu?.map((c) => `${c.id}-${c.vcpuCount}-${c.vcpuCount * (c.id.endsWith("g") ? 4 : 2)}`) ?? null) : null,
    networkVolumeId: fields.networkVolumeId ?? null,
    networkVolumeIds: (fields.networkVolumeIds ?? []).map((networkVolumeId) => ({ networkVolumeId })),
    networkVolume: volume ? { id: volume.id, name: volume.name, size: volume.size, dataCenterId: volume.dataCenter } : null,
    locations: anywhere ? null : fields.dataCenterIds.join(","),
    idleTimeout: spec.idleTimeout,
    scalerType: fields.scalerType,
    scalerValue: fields.scalerValue,
    workersMin: spec.workersMin,
    workersMax: spec.workersMax,
    workersStandby: null,
    allowedCudaVersions: fields.allowedCudaVersions?.join(",") ?? null,
    minCudaVersion: fields.minCudaVersion ?? null,
    flashBootType: fields.flashboot ?? "OFF",
    executionTimeoutMs: spec.executionTimeoutMs ?? EXECUTION_TIMEOUT_DEFAULT_MS,
    type: spec.type === "LOAD_BALANCER" ? "LB" : "QB",
    userId: EMULATOR_USER_ID,
    version: fields.version,
    aiKey: null,
    env: envList(fields.env),
    modelReferences: [],
    createdAt: new Date(spec.createdAt).toISOString(),
    flashEnvironmentId: fields.flashEnvironmentId ?? null,
    workersPFBTarget: 0,
    activeBuildid: null,
    idePodId: null,
  };
}

/** The endpoints' part of the GraphQL API. */
export const endpointsGraphQL: GraphQLPart<Pick<ViewContext, "endpointManager" | "networkVolumes" | "templates">> = {
  typeDefs,
  scalars: [nameScalar("FlashBootType", FLASHBOOT_MODES, "FlashBoot: OFF, FLASHBOOT or PRIORITY_FLASHBOOT."), new GraphQLScalarType({ name: "JSON", description: "Any JSON value." })],
  resolvers: (core) => {
    const show = (e: ManagedEndpoint) => toGraphQLEndpoint(core, e);
    const manager = core.endpointManager;
    return {
      // The key the endpoint's metrics take (the SDKs send it to /v2/{id}/metrics): offline, the
      // key of whoever asks, which minipod accepts wherever it accepts that caller.
      Endpoint: { aiKey: (_parent, _args, caller) => caller.key ?? null },
      User: {
        endpoints: authed(() => manager.list().map(show)),
        endpoint: authed<{ id: string }, unknown>(({ id }) => show(manager.get(id))),
      },
      Mutation: {
        // With an id, a change of that endpoint (the service's saveEndpoint does both).
        saveEndpoint: authed<{ input?: EndpointInput | null }, Promise<unknown>>(async ({ input }) => {
          const i = input ?? {};
          const change = fieldsOf(i);
          const { flashboot, computeType: _computeType, cpu: _cpu, flashEnvironmentId: _environment, ...v1 } = change;
          conforms(UpdateEndpointV1Schema, { ...v1, ...(flashboot === undefined ? {} : { flashboot: flashboot !== "OFF" }), templateId: given(i.templateId) });
          const templateId = given(i.templateId);
          const container = i.template ? containerOf(i.template) : undefined;
          if (given(i.id)) return show(await manager.update(i.id!, { ...change, ...(templateId ? { templateId } : {}) }, container));
          if (change.name === undefined) throw badInput(["name: an endpoint needs a name"]);
          if ((templateId === undefined) === (container === undefined)) throw badInput(["templateId: give a templateId or an inline template, one of them"]);
          const create = { ...change, name: change.name, templateId, ...(i.type === "LB" ? { type: "LOAD_BALANCER" as const } : {}) } as NewEndpoint;
          return show(await manager.create(create, container));
        }),
        updateEndpointTemplate: authed<{ input?: { endpointId: string; templateId: string } | null }, Promise<unknown>>(async ({ input }) =>
          show(await manager.update(input?.endpointId ?? "", { templateId: input?.templateId ?? "" })),
        ),
        deleteEndpoint: authed<{ id: string }, null>(({ id }) => {
          manager.delete(id);
          return null;
        }),
      },
    };
  },
};
