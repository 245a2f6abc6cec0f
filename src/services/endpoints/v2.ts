import { z } from "@hono/zod-openapi";
import { V2, withBody, view } from "../shared/rest.js";
import { DATA_CENTER_IDS } from "../shared/catalog/catalog.js";
import { FLASHBOOT_MODES, type EndpointFields } from "./record.js";
import {
  ENDPOINT_IDLE_TIMEOUT_MAX_S,
  ENDPOINT_IDLE_TIMEOUT_MIN_S,
  EXECUTION_TIMEOUT_MAX_MS,
  EXECUTION_TIMEOUT_MIN_MS,
  EXECUTION_TIMEOUT_DEFAULT_MS,
  LB_HEALTH_PATH_DEFAULT,
} from "../../domain/limits.js";
import { int } from "../../http/schemas.js";
import { containerResponse, cudaVersion, optionalContainerRequest, argsOf, containerFromV2, iso } from "../shared/container-v2.js";
import type { ContainerChange } from "./endpoint-container.js";
import type { EndpointChange, ManagedEndpoint, NewEndpoint } from "./model.js";
import { cpuMemoryGb, vcpuProblem } from "../shared/catalog/cpu-catalog.js";
import { gpuSelection, typesOf } from "../shared/catalog/gpu-catalog.js";
import { invalidBody } from "../shared/invalid.js";
import { DEFAULT_GPU_TYPE_ID } from "../shared/pricing.js";
import { isLoadBalancer } from "../../domain/endpoint.js";
import { LB_PATH_PREFIX } from "../../domain/load-balancer/types.js";
import type { ViewContext } from "../shared/service.js";

/** The service's v2 serverless endpoint (`/v2/serverless`), request and response. */

const Flashboot = z.enum(FLASHBOOT_MODES);
const EndpointType = z.enum(["QUEUE", "LOAD_BALANCER"]);

const QueueDelayScaling = z.strictObject({ type: z.literal("QUEUE_DELAY"), queueDelay: z.number().min(0.5).openapi({ description: "Seconds a request may wait before a worker is added" }) });
const RequestCountScaling = z.strictObject({ type: z.literal("REQUEST_COUNT"), requestCount: int().min(1) });
export const EndpointScalingV2Schema = z.discriminatedUnion("type", [QueueDelayScaling, RequestCountScaling]).openapi("EndpointScaling");

export const EndpointWorkersV2Schema = z
  .strictObject({
    min: int().min(0).optional(),
    max: int().min(0).optional(),
    idleTimeout: int().min(ENDPOINT_IDLE_TIMEOUT_MIN_S).max(ENDPOINT_IDLE_TIMEOUT_MAX_S).optional().openapi({ description: "Seconds; not for queue endpoints scaling on REQUEST_COUNT" }),
  })
  .openapi("EndpointWorkers");

const excludedTypes = z.array(z.string().regex(/^\s*[^-\s]/, "expected a GPU type id")).refine((a) => new Set(a.map((s) => s.trim())).size === a.length, "expected unique GPU types");
const gpuShared = {
  excludedTypes: excludedTypes.optional().openapi({ description: "GPU type ids to take out of the pools" }),
  count: int().min(1).optional(),
  allowedCudaVersions: z.array(cudaVersion()).optional(),
};
export const CreateEndpointGpuV2Schema = z
  .strictObject({
    pools: z
      .array(z.string().min(1))
      .min(1)
      .openapi({ description: "Serverless GPU pool ids (GET /v2/catalog/gpus: pool); minipod also takes a GPU type id as a pool of that one type", example: ["ADA_24"] }),
    ...gpuShared,
    minCudaVersion: cudaVersion().optional(),
  })
  .openapi("CreateEndpointGpuConfig");
export const UpdateEndpointGpuV2Schema = z
  .strictObject({ pools: z.array(z.string().min(1)).min(1).optional(), ...gpuShared, minCudaVersion: z.union([z.literal(""), cudaVersion()]).optional() })
  .refine((g) => g.excludedTypes === undefined || g.pools !== undefined, { message: "expected pools with excludedTypes (the two are one selection)", path: ["excludedTypes"] })
  .openapi("UpdateEndpointGpuConfig");

const CpuConfig = z.strictObject({ id: z.string().min(1), vcpuCount: int().min(2) });
const cpuList = z
  .array(CpuConfig)
  .min(1)
  .refine((a) => new Set(a.map((c) => `${c.id}/${c.vcpuCount}`)).size === a.length, "expected no duplicate CPU configurations");

const common = {
  ...optionalContainerRequest,
  dataCenterIds: z.array(z.enum(DATA_CENTER_IDS)).optional(),
  flashboot: Flashboot.optional(),
  networkVolumes: z.array(z.string().min(1)).optional(),
  timeout: int().min(EXECUTION_TIMEOUT_MIN_MS).max(EXECUTION_TIMEOUT_MAX_MS).optional().openapi({ description: "Execution timeout of a job, ms (default 600000)" }),
  workers: EndpointWorkersV2Schema.optional(),
  cpu: cpuList.optional(),
};

export const CreateEndpointV2Schema = z
  .strictObject({
    ...common,
    name: z.string().min(1),
    type: EndpointType.openapi({ description: "QUEUE: jobs through /v2/{id}/run; LOAD_BALANCER: requests go to a worker's HTTP server at requestUrls.base (scaling must be REQUEST_COUNT)" }),
    scaling: EndpointScalingV2Schema,
    gpu: CreateEndpointGpuV2Schema.optional(),
    templateId: z.string().min(1).optional(),
  })
  .refine((b) => b.templateId !== undefined || b.image !== undefined, { message: "expected image, or a templateId to take it from", path: ["image"] })
  .openapi("CreateEndpointRequest", { description: "Exactly one of gpu and cpu. Defaults: workers 0..3, idleTimeout 10 s, flashboot OFF" });

export const UpdateEndpointV2Schema = z
  .strictObject({ ...common, name: z.string().min(1).optional(), scaling: EndpointScalingV2Schema.optional(), gpu: UpdateEndpointGpuV2Schema.optional(), templateId: z.string().min(1).optional() })
  .openapi("UpdateEndpointRequest", { description: "Only the fields given change" });

const QueueUrls = z.object({
  run: z.string(),
  runSync: z.string(),
  status: z.string(),
  stream: z.string(),
  cancel: z.string(),
  retry: z.string(),
  purgeQueue: z.string(),
  health: z.string(),
});

const LoadBalancerUrls = z.object({
  base: z.string().openapi({ description: "minipod: http://127.0.0.1:PORT/lb/{id}; http://{id}.localhost:PORT is the same endpoint" }),
  health: z.string(),
});

export const EndpointV2Schema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: EndpointType,
    requestUrls: z.union([QueueUrls, LoadBalancerUrls]),
    args: containerResponse.args.optional(),
    disk: containerResponse.disk.optional(),
    env: containerResponse.env.optional(),
    image: containerResponse.image.optional(),
    ports: containerResponse.ports.optional(),
    registry: containerResponse.registry.optional(),
    gpu: z
      .object({
        pools: z.array(z.string()),
        excludedTypes: z.array(z.string()).optional(),
        count: z.int(),
        allowedCudaVersions: z.array(z.string()),
        minCudaVersion: z.string().nullable(),
      })
      .nullable(),
    cpu: z.array(z.object({ id: z.string(), vcpuCount: z.int(), memory: z.int() })).optional(),
    workers: z.object({ min: z.int(), max: z.int(), idleTimeout: z.int().optional() }),
    scaling: EndpointScalingV2Schema,
    dataCenterIds: z.array(z.string()),
    networkVolumes: z.array(z.string()),
    timeout: z.int(),
    flashboot: Flashboot,
    createdAt: z.string(),
  })
  .openapi("EndpointV2");

export type EndpointV2 = z.infer<typeof EndpointV2Schema>;
export type CreateEndpointV2 = z.output<typeof CreateEndpointV2Schema>;
export type UpdateEndpointV2 = z.output<typeof UpdateEndpointV2Schema>;

/** v2's default idle timeout of a new endpoint, seconds (CreateEndpointRequest: workers.idleTimeout default 10). */
const V2_IDLE_TIMEOUT_DEFAULT_S = 10;

/** The queue URLs of an endpoint on this host (`{job_id}` stands for a job's id, as the service writes them). */
function requestUrls(origin: string, id: string): EndpointV2["requestUrls"] {
  const base = `${origin}/v2/${id}`;
  return {
    run: `${base}/run`,
    runSync: `${base}/runsync`,
    status: `${base}/status/{job_id}`,
    stream: `${base}/stream/{job_id}`,
    cancel: `${base}/cancel/{job_id}`,
    retry: `${base}/retry/{job_id}`,
    purgeQueue: `${base}/purge-queue`,
    health: `${base}/health`,
  };
}

/**
 * Where a load-balancing endpoint is reached on this host: a path of its own, which needs no name
 * resolution (`http://{id}.localhost:PORT` is the same endpoint); health is the workers' check.
 */
function loadBalancerUrls(origin: string, id: string): EndpointV2["requestUrls"] {
  const base = `${origin}${LB_PATH_PREFIX}/${id}`;
  return { base, health: `${base}${LB_HEALTH_PATH_DEFAULT}` };
}

/** An endpoint as v2 shows it: its template's container settings, its GPU pools or CPU configurations, its scaling. */
/** An endpoint as v2 shows it; `origin` is this host's, which its request URLs name. */
export function toEndpointV2(core: Pick<ViewContext, "endpointManager">, e: ManagedEndpoint, origin: string): EndpointV2 {
  const { id, name, type, ...rest } = endpointFieldsV2(core, e);
  return { id, name, type, requestUrls: type === "LOAD_BALANCER" ? loadBalancerUrls(origin, id) : requestUrls(origin, id), ...rest };
}

/** An endpoint's v2 fields but its request URLs, which name this host rather than the endpoint. */
export function endpointFieldsV2(core: Pick<ViewContext, "endpointManager">, e: ManagedEndpoint): Omit<EndpointV2, "requestUrls"> {
  const { spec, fields: f } = e;
  const template = core.endpointManager.template(e);
  const lb = isLoadBalancer(spec);
  // Queue endpoints scaling on REQUEST_COUNT have no idle timeout; load-balancing ones do.
  const requestCount = f.scalerType === "REQUEST_COUNT" && !lb;
  const view: Omit<EndpointV2, "requestUrls"> = {
    id: spec.id,
    name: spec.name,
    type: lb ? "LOAD_BALANCER" : "QUEUE",
    gpu: null,
    workers: { min: spec.workersMin, max: spec.workersMax, ...(requestCount ? {} : { idleTimeout: spec.idleTimeout }) },
    scaling: f.scalerType === "REQUEST_COUNT" ? { type: "REQUEST_COUNT", requestCount: Math.max(1, Math.round(f.scalerValue)) } : { type: "QUEUE_DELAY", queueDelay: f.scalerValue },
    dataCenterIds: f.dataCenterIds,
    networkVolumes: f.networkVolumeIds ?? (f.networkVolumeId === undefined ? [] : [f.networkVolumeId]),
    timeout: spec.executionTimeoutMs ?? EXECUTION_TIMEOUT_DEFAULT_MS,
    flashboot: f.flashboot ?? "OFF",
    createdAt: iso(spec.createdAt),
  };
  if (template) {
    Object.assign(view, {
      image: template.imageName,
      args: argsOf(template.dockerStartCmd),
      disk: template.containerDiskInGb,
      ports: template.ports,
      env: { ...template.env, ...f.env },
      registry: template.containerRegistryAuthId ?? null,
    });
  } else if (Object.keys(f.env).length) {
    view.env = f.env;
  }
  if (f.computeType === "CPU") {
    view.cpu = (f.cpu ?? []).map((s) => ({ id: s.id, vcpuCount: s.vcpuCount, memory: cpuMemoryGb(s.id, s.vcpuCount) }));
  } else {
    const { pools, excludedTypes } = gpuSelection(f.gpuTypeIds.length ? f.gpuTypeIds : [DEFAULT_GPU_TYPE_ID]);
    view.gpu = { pools, ...(excludedTypes.length ? { excludedTypes } : {}), count: f.gpuCount, allowedCudaVersions: f.allowedCudaVersions ?? [], minCudaVersion: f.minCudaVersion ?? null };
  }
  return view;
}

type Body = CreateEndpointV2 | UpdateEndpointV2;

/** The v2 body's container settings, in the model's names. */
export const containerOf = (b: Body): ContainerChange => ({ ...containerFromV2(b), fromTemplate: b.templateId });

/** A GPU selection (pools minus excluded types) as the GPU types workers may get, in order. */
function gpuTypes(pools: readonly string[], excluded: readonly string[] = []): string[] {
  const errors: string[] = [];
  const members = pools.flatMap((p, i) => {
    const types = typesOf(p);
    if (!types) errors.push(`$.gpu.pools[${i}]: unknown GPU pool "${p}"; the pools are the pool field of GET /v2/catalog/gpus`);
    return types ?? [];
  });
  const out = new Set(excluded.map((t) => t.trim()));
  out.forEach((t) => {
    if (!members.includes(t)) errors.push(`$.gpu.excludedTypes: "${t}" is not a GPU type of the selected pools`);
  });
  const types = members.filter((t) => !out.has(t));
  if (errors.length === 0 && types.length === 0) errors.push("$.gpu.excludedTypes: the exclusions leave no GPU type in the selected pools; keep at least one");
  if (errors.length) throw invalidBody(errors);
  return types;
}

/** Rules of the v2 body that v1 does not have: a CPU selection that fits its flavors, CUDA set or floor, idle timeout and scaler. */
function check(b: Body, computeType: "GPU" | "CPU", scalerType: EndpointFields["scalerType"], allowed: string[] | undefined, min: string | undefined, lb: boolean): void {
  const errors: string[] = [];
  b.cpu?.forEach((s, i) => {
    const problem = vcpuProblem(s.id, s.vcpuCount);
    if (problem) errors.push(`$.cpu[${i}]: ${problem}`);
  });
  if (computeType === "GPU" && allowed?.length && min) errors.push('$.gpu: allowedCudaVersions (non-empty) and minCudaVersion exclude each other; send one of them ([] clears the set, "" the floor)');
  if (scalerType === "REQUEST_COUNT" && !lb && b.workers?.idleTimeout !== undefined) errors.push("$.workers.idleTimeout: queue endpoints scaling on REQUEST_COUNT have no idle timeout; leave it out");
  if (errors.length) throw invalidBody(errors);
}

/** A v2 create body as a new endpoint and its container settings. */
function newEndpointFromV2(b: CreateEndpointV2): { input: NewEndpoint; container: ContainerChange } {
  if (b.type === "LOAD_BALANCER" && b.scaling.type !== "REQUEST_COUNT")
    throw invalidBody(["$.scaling.type: LOAD_BALANCER endpoints scale on REQUEST_COUNT (requests in flight per worker); QUEUE_DELAY is for queue endpoints"]);
  if ((b.gpu === undefined) === (b.cpu === undefined)) throw invalidBody(["$: expected exactly one of gpu and cpu"]);
  const computeType = b.gpu ? "GPU" : "CPU";
  check(b, computeType, b.scaling.type, b.gpu?.allowedCudaVersions, b.gpu?.minCudaVersion, b.type === "LOAD_BALANCER");
  const input: NewEndpoint = {
    name: b.name,
    type: b.type,
    computeType,
    workersMin: b.workers?.min,
    workersMax: b.workers?.max,
    idleTimeout: b.workers?.idleTimeout ?? V2_IDLE_TIMEOUT_DEFAULT_S,
    executionTimeoutMs: b.timeout,
    scalerType: b.scaling.type,
    scalerValue: b.scaling.type === "QUEUE_DELAY" ? b.scaling.queueDelay : b.scaling.requestCount,
    dataCenterIds: b.dataCenterIds?.length ? b.dataCenterIds : undefined,
    networkVolumeIds: b.networkVolumes,
    flashboot: b.flashboot ?? "OFF",
    cpu: b.cpu,
  };
  if (b.gpu) {
    Object.assign(input, {
      gpuTypeIds: gpuTypes(b.gpu.pools, b.gpu.excludedTypes),
      gpuCount: b.gpu.count,
      allowedCudaVersions: b.gpu.allowedCudaVersions,
      minCudaVersion: b.gpu.minCudaVersion,
    });
  }
  return { input, container: containerOf(b) };
}

/** A v2 update body as a change of the endpoint `e` and of its container settings. */
function endpointChangeFromV2(b: UpdateEndpointV2, e: ManagedEndpoint): { change: EndpointChange; container: ContainerChange } {
  const f = e.fields;
  if (b.gpu && b.cpu) throw invalidBody(["$: expected at most one of gpu and cpu"]);
  if (b.gpu && f.computeType === "CPU") throw invalidBody(["$.gpu: this is a CPU endpoint; its compute family cannot change (send cpu)"]);
  if (b.cpu && f.computeType === "GPU") throw invalidBody(["$.cpu: this is a GPU endpoint; its compute family cannot change (send gpu)"]);
  const allowed = b.gpu?.allowedCudaVersions ?? f.allowedCudaVersions;
  const min = b.gpu?.minCudaVersion === undefined ? f.minCudaVersion : b.gpu.minCudaVersion || undefined;
  const lb = isLoadBalancer(e.spec);
  if (lb && b.scaling?.type === "QUEUE_DELAY")
    throw invalidBody(["$.scaling.type: LOAD_BALANCER endpoints scale on REQUEST_COUNT (requests in flight per worker); QUEUE_DELAY is for queue endpoints"]);
  check(b, f.computeType, b.scaling?.type ?? f.scalerType, allowed, min, lb);
  const change: EndpointChange = {
    name: b.name,
    workersMin: b.workers?.min,
    workersMax: b.workers?.max,
    idleTimeout: b.workers?.idleTimeout,
    executionTimeoutMs: b.timeout,
    dataCenterIds: b.dataCenterIds === undefined ? undefined : b.dataCenterIds.length ? b.dataCenterIds : [...DATA_CENTER_IDS],
    flashboot: b.flashboot,
    cpu: b.cpu,
  };
  if (b.scaling) Object.assign(change, { scalerType: b.scaling.type, scalerValue: b.scaling.type === "QUEUE_DELAY" ? b.scaling.queueDelay : b.scaling.requestCount });
  if (b.networkVolumes) Object.assign(change, { networkVolumeIds: b.networkVolumes, networkVolumeId: null });
  if (b.gpu) {
    if (b.gpu.pools) change.gpuTypeIds = gpuTypes(b.gpu.pools, b.gpu.excludedTypes);
    Object.assign(change, { gpuCount: b.gpu.count, allowedCudaVersions: b.gpu.allowedCudaVersions });
    if (b.gpu.minCudaVersion !== undefined) change.minCudaVersion = b.gpu.minCudaVersion === "" ? null : b.gpu.minCudaVersion;
  }
  return { change, container: containerOf(b) };
}

/** What the view reads: the endpoints' manager. */
type Reads = Pick<ViewContext, "endpointManager">;

/** `/v2/serverless`: an endpoint carries its container settings itself, in a template of its own. */
export const endpointV2 = view<ManagedEndpoint, Reads>(V2, "serverless", "Endpoint", EndpointV2Schema, (core, e, c) => toEndpointV2(core, e, new URL(c.req.url).origin), {
  create: withBody(CreateEndpointV2Schema, (core, body) => {
    const { input, container } = newEndpointFromV2(body);
    return core.endpointManager.create(input, container);
  }),
  update: withBody(UpdateEndpointV2Schema, (core, body, _c, id) => {
    const { change, container } = endpointChangeFromV2(body, core.endpointManager.get(id));
    return core.endpointManager.update(id, change, container);
  }),
  docs: {
    create: {
      description:
        "The endpoint serves the queue under /v2/{id} at once, on simulated workers (its minimum start cold, 1 s). Its container settings (image, env, ...) go to a template of its own, copied from templateId if given; its handler is that template's, else the config's defaultHandler.",
    },
    update: {
      description:
        "Only the fields given change. workers, scaling and timeout reach the simulated workers at once; a change of the container settings (image, env, ...) is a new release (see /releases).",
    },
    delete: { description: "Its workers stop, its jobs are forgotten (held requests on them answer 404) and its own template goes with it." },
  },
});
