import { z } from "@hono/zod-openapi";
import { ENDPOINT_WORKERS_LIMIT } from "../../domain/bounds.js";
import { COMPUTE_TYPES, CPU_FLAVOR_IDS, CUDA_VERSIONS, DATA_CENTER_IDS, GPU_TYPE_IDS, SCALER_TYPES } from "../shared/catalog/catalog.js";
import {
  ENDPOINT_IDLE_TIMEOUT_MAX_S,
  ENDPOINT_IDLE_TIMEOUT_MIN_S,
  ENDPOINT_NAME_MAX_LENGTH,
  EXECUTION_TIMEOUT_MAX_MS,
  EXECUTION_TIMEOUT_MIN_MS,
} from "../../domain/limits.js";
import { int } from "../../http/schemas.js";
import { TemplateSchema } from "../templates/index.js";

export const TAG = "Endpoints";

/** A simulated worker, in the shape of the v1 Pod the real `workers` list holds. */
export const WorkerSchema = z
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

export const EndpointSchema = z
  .object({
    id: z.string().openapi({ example: "jpnw0v75y3qoql" }),
    name: z.string(),
    type: z.literal("LOAD_BALANCER").optional().openapi({ description: "minipod: present on load-balancing endpoints (absent: queue-based)" }),
    templateId: z.string().optional(),
    template: TemplateSchema.optional().openapi({ description: "With includeTemplate=true" }),
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
    workers: z.array(WorkerSchema).optional().openapi({ description: "With includeWorkers=true: the simulated workers" }),
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

export const CreateEndpointSchema = z
  .object(fields)
  .partial()
  .required({ name: true, templateId: true })
  .openapi("EndpointCreateInput");

export const UpdateEndpointSchema = z
  .object(fields)
  .partial()
  .openapi("EndpointUpdateInput", { description: "Only the fields given change; workersMin, workersMax and idleTimeout reach the workers at once" });

export type EndpointView = z.infer<typeof EndpointSchema>;
export type WorkerView = z.infer<typeof WorkerSchema>;
