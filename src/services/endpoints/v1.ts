import { z } from "@hono/zod-openapi";
import { queryOf, V1, withBody, view } from "../shared/rest.js";
import { invalidBody } from "../shared/invalid.js";
import { ENDPOINT_WORKERS_LIMIT } from "../../domain/bounds.js";
import { COMPUTE_TYPES, CPU_FLAVOR_IDS, CUDA_VERSIONS, DATA_CENTER_IDS, GPU_TYPE_IDS, SCALER_TYPES } from "../shared/catalog/catalog.js";
import {
  ENDPOINT_IDLE_TIMEOUT_MAX_S,
  ENDPOINT_IDLE_TIMEOUT_MIN_S,
  ENDPOINT_NAME_MAX_LENGTH,
  EXECUTION_TIMEOUT_MAX_MS,
  EXECUTION_TIMEOUT_MIN_MS,
  EXECUTION_TIMEOUT_DEFAULT_MS,
} from "../../domain/limits.js";
import { int } from "../../http/schemas.js";
import { flagQuery, TemplateV1Schema, toTemplateV1 } from "../templates/index.js";
import type { ManagedEndpoint } from "./model.js";
import { cpuFromV1, EMULATOR_USER_ID, type CpuSelection } from "./record.js";
import type { SimWorker } from "../../domain/simulated-workers.js";
import type { ViewContext } from "../shared/service.js";

export const TAG = "Endpoints";

/** A simulated worker, in the shape of the v1 Pod the real `workers` list holds. */
export const EndpointWorkerV1Schema = z
  .object({
    id: z.string(),
    name: z.string(),
    desiredStatus: z.literal("RUNNING"),
    endpointId: z.string(),
    aiApiId: z.string(),
    templateId: z.string().optional(),
    image: z.string().optional(),
    gpuCount: z.int(),
    gpu: z.object({ id: z.string(), count: z.int() }).optional().openapi({ description: "The first of the endpoint's gpuTypeIds (every type is available here)" }),
    slsVersion: z.int(),
    lastStatusChange: z.string().openapi({ description: "minipod: the simulated worker's state and since when", example: "idle since 2026-01-01T00:00:05.000Z" }),
  })
  .openapi("EndpointWorker");

export const EndpointV1Schema = z
  .object({
    id: z.string().openapi({ example: "jpnw0v75y3qoql" }),
    name: z.string(),
    type: z.literal("LOAD_BALANCER").optional().openapi({ description: "minipod: present on load-balancing endpoints (absent: queue-based)" }),
    templateId: z.string().optional(),
    template: TemplateV1Schema.optional().openapi({ description: "With includeTemplate=true" }),
    gpuTypeIds: z.array(z.string()),
    gpuCount: z.int(),
    workersMin: z.int(),
    workersMax: z.int(),
    idleTimeout: z.int(),
    executionTimeoutMs: z.int(),
    scalerType: z.enum(SCALER_TYPES),
    scalerValue: z.int(),
    networkVolumeId: z.string().optional(),
    networkVolumeIds: z.array(z.string()).optional(),
    dataCenterIds: z.array(z.string()),
    env: z.record(z.string(), z.string()),
    computeType: z.enum(COMPUTE_TYPES),
    allowedCudaVersions: z.array(z.string()).optional(),
    minCudaVersion: z.string().optional(),
    flashboot: z.boolean().optional(),
    createdAt: z.string().openapi({ description: "Virtual time, ISO 8601", example: "2024-07-12T19:14:40.144Z" }),
    userId: z.string(),
    version: z.int().openapi({ description: "Goes up whenever the template or the env changes" }),
    workers: z.array(EndpointWorkerV1Schema).optional().openapi({ description: "With includeWorkers=true: the simulated workers" }),
  })
  .openapi("Endpoint");

const fields = {
  name: z.string().min(1).max(ENDPOINT_NAME_MAX_LENGTH).openapi({ example: "my endpoint" }),
  type: z.enum(["QUEUE", "LOAD_BALANCER"]).openapi({ description: "minipod: default QUEUE; LOAD_BALANCER routes requests to a worker's HTTP server (scalerType REQUEST_COUNT)" }),
  templateId: z.string().min(1).openapi({ example: "30zmvf89kd" }),
  gpuTypeIds: z.array(z.enum(GPU_TYPE_IDS)).openapi({ description: "In priority order; workers get the first available (here: always the first)" }),
  gpuCount: int().min(1).openapi({ description: "Default 1" }),
  workersMin: int().min(0).max(ENDPOINT_WORKERS_LIMIT).openapi({ description: `Workers kept warm; default 0, at most ${ENDPOINT_WORKERS_LIMIT} here` }),
  workersMax: int().min(0).max(ENDPOINT_WORKERS_LIMIT).openapi({ description: `Default 3, at most ${ENDPOINT_WORKERS_LIMIT} here` }),
  idleTimeout: int().min(ENDPOINT_IDLE_TIMEOUT_MIN_S).max(ENDPOINT_IDLE_TIMEOUT_MAX_S).openapi({ description: "Seconds; default 5" }),
  executionTimeoutMs: int().min(EXECUTION_TIMEOUT_MIN_MS).max(EXECUTION_TIMEOUT_MAX_MS).openapi({ description: "Default 600000" }),
  scalerType: z.enum(SCALER_TYPES).openapi({ description: "Default QUEUE_DELAY; stored, the simulated scaler starts a worker per waiting job" }),
  scalerValue: int().min(1).openapi({ description: "Default 4" }),
  networkVolumeId: z.string().min(1),
  networkVolumeIds: z.array(z.string().min(1)),
  dataCenterIds: z.array(z.enum(DATA_CENTER_IDS)).openapi({ description: "Default: every data center" }),
  env: z.record(z.string(), z.string()),
  computeType: z.enum(COMPUTE_TYPES).openapi({ description: "Default GPU" }),
  flashboot: z.boolean(),
  allowedCudaVersions: z.array(z.enum(CUDA_VERSIONS)),
  minCudaVersion: z.enum(CUDA_VERSIONS),
  cpuFlavorIds: z.array(z.enum(CPU_FLAVOR_IDS)),
  vcpuCount: int().min(1),
};

export const CreateEndpointV1Schema = z
  .object(fields)
  .partial()
  .required({ name: true, templateId: true })
  .openapi("EndpointCreateInput");

export const UpdateEndpointV1Schema = z
  .object(fields)
  .partial()
  .openapi("EndpointUpdateInput", { description: "Only the fields given change; workersMin, workersMax and idleTimeout reach the workers at once" });

export type EndpointV1 = z.infer<typeof EndpointV1Schema>;
export type EndpointWorkerV1 = z.infer<typeof EndpointWorkerV1Schema>;

export interface EndpointIncludes {
  includeTemplate?: boolean;
  includeWorkers?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An endpoint as the v1 surface shows it; times are virtual time in ISO 8601. */
export function toEndpointV1(core: Pick<ViewContext, "endpointManager" | "templates">, { spec, fields }: ManagedEndpoint, inc: EndpointIncludes = {}): EndpointV1 {
  const view: EndpointV1 = {
    id: spec.id,
    name: spec.name,
    gpuTypeIds: fields.gpuTypeIds,
    gpuCount: fields.gpuCount,
    workersMin: spec.workersMin,
    workersMax: spec.workersMax,
    idleTimeout: spec.idleTimeout,
    executionTimeoutMs: spec.executionTimeoutMs ?? EXECUTION_TIMEOUT_DEFAULT_MS,
    scalerType: fields.scalerType,
    scalerValue: fields.scalerValue,
    dataCenterIds: fields.dataCenterIds,
    env: fields.env,
    computeType: fields.computeType,
    createdAt: iso(spec.createdAt),
    userId: EMULATOR_USER_ID,
    version: fields.version,
  };
  if (spec.type === "LOAD_BALANCER") view.type = spec.type;
  if (fields.templateId !== undefined) view.templateId = fields.templateId;
  if (fields.networkVolumeId !== undefined) view.networkVolumeId = fields.networkVolumeId;
  if (fields.networkVolumeIds !== undefined) view.networkVolumeIds = fields.networkVolumeIds;
  if (fields.allowedCudaVersions !== undefined) view.allowedCudaVersions = fields.allowedCudaVersions;
  if (fields.minCudaVersion !== undefined) view.minCudaVersion = fields.minCudaVersion;
  if (fields.flashboot !== undefined) view.flashboot = fields.flashboot !== "OFF";
  const template = fields.templateId !== undefined ? core.templates.find(fields.templateId) : undefined;
  if (inc.includeTemplate && template) view.template = toTemplateV1(template);
  if (inc.includeWorkers) {
    view.workers = core.endpointManager.workers(spec.id).map((w) => toWorkerView(w, { spec, fields }, template?.imageName));
  }
  return view;
}

function toWorkerView(w: SimWorker, { spec, fields }: ManagedEndpoint, image: string | undefined): EndpointWorkerV1 {
  const state = w.state === "running" && w.jobId ? `running job ${w.jobId}` : w.state;
  const view: EndpointWorkerV1 = {
    id: w.id,
    name: `${spec.name} worker`,
    desiredStatus: "RUNNING",
    endpointId: spec.id,
    aiApiId: spec.id,
    gpuCount: fields.gpuCount,
    slsVersion: fields.version,
    lastStatusChange: `${state} since ${iso(w.since)}`,
  };
  if (fields.templateId !== undefined) view.templateId = fields.templateId;
  if (image !== undefined) view.image = image;
  const gpu = fields.gpuTypeIds[0];
  if (gpu !== undefined && fields.computeType === "GPU") view.gpu = { id: gpu, count: fields.gpuCount };
  return view;
}

const IncludesQuery = z.object({
  includeTemplate: flagQuery("includeTemplate", "Include the endpoint's template"),
  includeWorkers: flagQuery("includeWorkers", "Include the endpoint's simulated workers"),
});

const includes = (q: z.infer<typeof IncludesQuery>): EndpointIncludes => ({ includeTemplate: q.includeTemplate === "true", includeWorkers: q.includeWorkers === "true" });

/** A v1 body in the model's terms: flashboot a mode, the CPU flavors and vCPU count as CPU selections. */
function fromV1<B extends { flashboot?: boolean | undefined; cpuFlavorIds?: string[] | undefined; vcpuCount?: number | undefined }>(body: B, currentCpu: CpuSelection[] | undefined) {
  const { flashboot, cpuFlavorIds, vcpuCount, ...rest } = body;
  return {
    ...rest,
    ...(flashboot === undefined ? {} : { flashboot: flashboot ? ("FLASHBOOT" as const) : ("OFF" as const) }),
    ...(cpuFlavorIds === undefined && vcpuCount === undefined ? {} : { cpu: cpuFromV1(cpuFlavorIds, vcpuCount, currentCpu) }),
  };
}

/** What the view reads: the endpoints' manager, and the templates an endpoint's includes show. */
type Reads = Pick<ViewContext, "endpointManager" | "templates">;

/** `/v1/endpoints`: the template and the workers with includeTemplate and includeWorkers; `flashboot` a flag. */
export const endpointV1 = view<ManagedEndpoint, Reads>(V1, "endpoints", "Endpoint", EndpointV1Schema, (core, e, c) => toEndpointV1(core, e, includes(queryOf(c))), {
  query: { list: IncludesQuery, get: IncludesQuery },
  create: withBody(CreateEndpointV1Schema, (core, body) => core.endpointManager.create(fromV1(body, undefined))),
  update: withBody(UpdateEndpointV1Schema, (core, body, _c, id) => {
    const { type, ...change } = body;
    if (type !== undefined && (type === "LOAD_BALANCER") !== (core.endpointManager.get(id).spec.type === "LOAD_BALANCER")) {
      throw invalidBody(["$.type: an endpoint's type cannot change; create another endpoint of the other type"]);
    }
    return core.endpointManager.update(id, fromV1(change, core.endpointManager.get(id).fields.cpu));
  }),
  docs: {
    create: {
      description:
        "The endpoint serves the queue operations under /v2/{id} at once, running its template's handler (or the config's defaultHandler); its minimum workers start cold. The template must be a serverless one.",
    },
    update: {
      description:
        "Only the fields given change. workersMin, workersMax and idleTimeout take effect on the simulated workers at once (idle workers over a lower maximum stop; a higher minimum starts workers); a new templateId switches the handler.",
    },
    delete: { description: "Its running handlers are stopped and its jobs forgotten; its queue operations answer 404 from then on." },
  },
});
