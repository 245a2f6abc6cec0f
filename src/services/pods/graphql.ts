import { argsOf, argsText, authed, badInput, commaList, conforms, envRecord, given, nameScalar, type GraphQLPart } from "../shared/graphql.js";
import { CreatePodV1Schema } from "./v1.js";
import type { ViewContext } from "../shared/service.js";
import { POD_DEFAULTS, type Pod, type PodCreate } from "./record.js";

/**
 * Pods as the GraphQL API shows them (`myself { pods }`, `pod`, `podFindAndDeployOnDemand`,
 * `deployCpuPod`, `podStop`, `podResume`, `podTerminate`...): the same pods as `/v1/pods` and
 * `/v2/pods`, through the same model.
 */
const typeDefs = /* GraphQL */ `
"""ALL, SECURE or COMMUNITY; bare (cloudType: ALL) or quoted."""
scalar CloudType

type PodMachine { podHostId: String  gpuDisplayName: String  gpuTypeId: String  cpuTypeId: String  dataCenterId: String  location: String  secureCloud: Boolean }
type PodRuntimePort { ip: String  isIpPublic: Boolean  privatePort: Int  publicPort: Int  type: String }
type PodRuntime { uptimeInSeconds: Int  ports: [PodRuntimePort!]! }

type Pod {
  id: String!
  name: String
  imageName: String
  """As the service lists it: KEY=value strings."""
  env: [String!]
  machineId: String
  machine: PodMachine
  desiredStatus: String
  lastStatusChange: String
  costPerHr: Float
  adjustedCostPerHr: Float
  containerDiskInGb: Int
  dockerArgs: String
  dockerId: String
  gpuCount: Int
  memoryInGb: Float
  vcpuCount: Float
  """RESERVED (on demand) or INTERRUPTABLE (spot)."""
  podType: String
  port: Int
  """Comma-separated, as 8888/http,22/tcp."""
  ports: String
  uptimeSeconds: Int
  volumeInGb: Float
  volumeMountPath: String
  templateId: String
  networkVolumeId: String
  locked: Boolean
  """Null while the pod is not running."""
  runtime: PodRuntime
}

input PodFilter { podId: String! }

input PodFindAndDeployOnDemandInput {
  name: String  imageName: String  gpuTypeId: String  gpuTypeIdList: [String!]  cloudType: CloudType  gpuCount: Int
  supportPublicIp: Boolean  startSsh: Boolean  startJupyter: Boolean  dataCenterId: String  countryCode: String
  volumeInGb: Int  containerDiskInGb: Int  minVcpuCount: Int  minMemoryInGb: Int  dockerArgs: String  ports: String
  volumeMountPath: String  env: [EnvironmentVariableInput!]  templateId: String  networkVolumeId: String
  allowedCudaVersions: [String!]  minCudaVersion: String  cudaVersion: String  minDownload: Int  minUpload: Int  deployCost: Float
  containerRegistryAuthId: String  bidPerGpu: Float  globalNetwork: Boolean  instanceId: String  interruptible: Boolean
  stopAfter: String  terminateAfter: String  compliance: [String!]
}

input DeployCpuPodInput {
  name: String  imageName: String  instanceId: String  cloudType: CloudType  startSsh: Boolean  startJupyter: Boolean
  dataCenterId: String  countryCode: String  volumeInGb: Int  containerDiskInGb: Int  dockerArgs: String  ports: String
  volumeMountPath: String  env: [EnvironmentVariableInput!]  templateId: String  networkVolumeId: String
  minDownload: Int  minUpload: Int  deployCost: Float  containerRegistryAuthId: String  supportPublicIp: Boolean
}

input PodStopInput { podId: String!  incrementVersion: Boolean }
input PodResumeInput { podId: String!  gpuCount: Int  syncMachine: Boolean }
input PodBidResumeInput { podId: String!  bidPerGpu: Float  gpuCount: Int }
input PodTerminateInput { podId: String! }

extend type User { pods: [Pod!]! }
extend type Query { pod(input: PodFilter): Pod }
extend type Mutation {
  podFindAndDeployOnDemand(input: PodFindAndDeployOnDemandInput): Pod
  podRentInterruptable(input: PodFindAndDeployOnDemandInput): Pod
  deployCpuPod(input: DeployCpuPodInput): Pod
  podStop(input: PodStopInput): Pod
  podResume(input: PodResumeInput): Pod
  podBidResume(input: PodBidResumeInput): Pod
  podRestart(input: PodTerminateInput): Pod
  podReset(input: PodTerminateInput): Pod
  podTerminate(input: PodTerminateInput): Void
}
`;

type DeployInput = Record<string, unknown> & {
  name?: string | null; imageName?: string | null; gpuTypeId?: string | null; gpuTypeIdList?: string[] | null; cloudType?: string | null; gpuCount?: number | null;
  startSsh?: boolean | null; startJupyter?: boolean | null; dataCenterId?: string | null; volumeInGb?: number | null; containerDiskInGb?: number | null;
  minVcpuCount?: number | null; minMemoryInGb?: number | null; dockerArgs?: string | null; ports?: string | null; volumeMountPath?: string | null;
  env?: Array<{ key: string; value?: string | null }> | null; templateId?: string | null; networkVolumeId?: string | null; allowedCudaVersions?: string[] | null;
  minCudaVersion?: string | null; containerRegistryAuthId?: string | null; instanceId?: string | null; interruptible?: boolean | null;
};

const num = (n: number | null | undefined): number | undefined => (n === null ? undefined : n);
const perGpu = (total: number | null | undefined, gpus: number, floor: number): number | undefined => (total ? Math.max(floor, Math.ceil(total / gpus)) : undefined);

/** The create input as the model's create body: names and shapes only. */
function podCreate(i: DeployInput, compute: "GPU" | "CPU", interruptible: boolean): PodCreate {
  const gpuCount = num(i.gpuCount) ?? POD_DEFAULTS.gpuCount;
  const cloud = i.cloudType === "SECURE" || i.cloudType === "COMMUNITY" ? i.cloudType : undefined;
  const gpuTypeIds = i.gpuTypeIdList?.length ? i.gpuTypeIdList : given(i.gpuTypeId) ? [i.gpuTypeId!] : undefined;
  // `cpu3c-2-4`: a flavor, its vCPU count and its memory.
  const instance = given(i.instanceId);
  const [, flavor, vcpus] = instance === undefined ? [] : (/^([a-z0-9]+)-(\d+)(?:-\d+)?$/.exec(instance) ?? []);
  if (instance !== undefined && !flavor) throw badInput([`instanceId: expected <flavor>-<vCPUs>[-<memory GB>], as cpu3c-2-4; got "${instance}"`]);
  return {
    name: given(i.name),
    imageName: given(i.imageName),
    templateId: given(i.templateId),
    computeType: compute,
    cloudType: cloud,
    gpuTypeIds: compute === "GPU" ? gpuTypeIds : undefined,
    gpuCount: compute === "GPU" ? gpuCount : undefined,
    cpuFlavorIds: compute === "CPU" && flavor ? [flavor] : undefined,
    vcpuCount: compute === "CPU" && vcpus ? Number(vcpus) : undefined,
    minVCPUPerGPU: compute === "GPU" ? perGpu(i.minVcpuCount, gpuCount, POD_DEFAULTS.minVCPUPerGPU) : undefined,
    minRAMPerGPU: compute === "GPU" ? perGpu(i.minMemoryInGb, gpuCount, POD_DEFAULTS.minRAMPerGPU) : undefined,
    containerDiskInGb: num(i.containerDiskInGb),
    volumeInGb: num(i.volumeInGb),
    volumeMountPath: given(i.volumeMountPath),
    networkVolumeId: given(i.networkVolumeId),
    containerRegistryAuthId: given(i.containerRegistryAuthId),
    dataCenterIds: given(i.dataCenterId) ? [i.dataCenterId!] : undefined,
    env: envRecord(i.env),
    ports: i.ports === null || i.ports === undefined ? undefined : (commaList(i.ports) ?? []),
    dockerStartCmd: argsOf(i.dockerArgs),
    interruptible: interruptible || (i.interruptible ?? false),
    allowedCudaVersions: i.allowedCudaVersions?.length ? i.allowedCudaVersions : undefined,
    minCudaVersion: given(i.minCudaVersion),
    startSsh: i.startSsh ?? undefined,
    startJupyter: i.startJupyter ?? undefined,
  };
}

/** "NVIDIA GeForce RTX 4090" → "RTX 4090", as the service's display names read. */
const displayName = (gpuTypeId: string) => gpuTypeId.replace(/^(NVIDIA|AMD)\s+(GeForce\s+)?/, "").trim();

/** A pod as the GraphQL API shows it. */
export function toGraphQLPod(core: Pick<ViewContext, "pods" | "clock">, pod: Pod): Record<string, unknown> {
  const running = pod.desiredStatus === "RUNNING";
  const uptime = running && pod.lastStartedAt !== undefined ? Math.floor((core.clock.now() - pod.lastStartedAt) / 1000) : 0;
  const cost = core.pods.costPerHr(pod);
  return {
    id: pod.id,
    name: pod.name,
    imageName: pod.imageName,
    env: Object.entries(pod.env).map(([k, v]) => `${k}=${v}`),
    machineId: pod.machineId,
    machine: {
      podHostId: `${pod.id}-${pod.machineId.slice(0, 8)}`,
      gpuDisplayName: pod.gpuTypeId ? displayName(pod.gpuTypeId) : null,
      gpuTypeId: pod.gpuTypeId ?? null,
      cpuTypeId: pod.cpuFlavorId ?? null,
      dataCenterId: pod.dataCenterId,
      location: pod.dataCenterId,
      secureCloud: pod.cloudType === "SECURE",
    },
    desiredStatus: pod.desiredStatus,
    lastStatusChange: pod.lastStatusChange,
    costPerHr: cost,
    adjustedCostPerHr: cost,
    containerDiskInGb: pod.containerDiskInGb,
    dockerArgs: argsText(pod.dockerStartCmd),
    dockerId: null,
    gpuCount: pod.gpuCount,
    memoryInGb: pod.memoryInGb,
    vcpuCount: pod.vcpuCount,
    podType: pod.interruptible ? "INTERRUPTABLE" : "RESERVED",
    port: null,
    ports: pod.ports.join(","),
    uptimeSeconds: uptime,
    volumeInGb: pod.volumeInGb,
    volumeMountPath: pod.volumeMountPath,
    templateId: pod.templateId ?? null,
    networkVolumeId: pod.networkVolumeId ?? null,
    locked: pod.locked,
    // minipod runs no container: no address or public port is ever mapped (as REST's publicIp and portMappings).
    runtime: running
      ? { uptimeInSeconds: uptime, ports: pod.ports.map((p) => ({ ip: null, isIpPublic: false, privatePort: Number(p.split("/")[0]), publicPort: null, type: p.split("/")[1] ?? "tcp" })) }
      : null,
  };
}

type PodIdInput = { input?: { podId: string } | null };
const podIdOf = (a: PodIdInput): string => a.input?.podId ?? "";

/** The pods' part of the GraphQL API. */
export const podsGraphQL: GraphQLPart<Pick<ViewContext, "pods" | "clock">> = {
  typeDefs,
  scalars: [nameScalar("CloudType", ["ALL", "SECURE", "COMMUNITY"], "Where a pod may run: ALL, SECURE or COMMUNITY.")],
  resolvers: (core) => {
    const show = (pod: Pod) => toGraphQLPod(core, pod);
    const deploy = (compute: "GPU" | "CPU", interruptible: boolean) =>
      authed<{ input?: DeployInput | null }, unknown>(({ input }) => {
        const create = podCreate(input ?? {}, compute, interruptible);
        conforms(CreatePodV1Schema, { ...create });
        return show(core.pods.create(create));
      });
    return {
      User: { pods: authed(() => core.pods.list().map(show)) },
      Query: { pod: authed<PodIdInput, unknown>((a) => show(core.pods.get(podIdOf(a)))) },
      Mutation: {
        podFindAndDeployOnDemand: deploy("GPU", false),
        podRentInterruptable: deploy("GPU", true),
        deployCpuPod: deploy("CPU", false),
        podStop: authed<PodIdInput, unknown>((a) => show(core.pods.stop(podIdOf(a)))),
        podResume: authed<PodIdInput, unknown>((a) => show(core.pods.start(podIdOf(a)))),
        podBidResume: authed<PodIdInput, unknown>((a) => show(core.pods.start(podIdOf(a)))),
        podRestart: authed<PodIdInput, unknown>((a) => show(core.pods.restart(podIdOf(a)))),
        podReset: authed<PodIdInput, unknown>((a) => show(core.pods.reset(podIdOf(a)))),
        podTerminate: authed<PodIdInput, unknown>((a) => {
          core.pods.delete(podIdOf(a));
          return null;
        }),
      },
    };
  },
};
