import { z } from "@hono/zod-openapi";
import { DATA_CENTER_IDS } from "../shared/catalog/catalog.js";
import { FLASHBOOT_MODES } from "./endpoint-fields.js";
import { ENDPOINT_IDLE_TIMEOUT_MAX_S, ENDPOINT_IDLE_TIMEOUT_MIN_S, EXECUTION_TIMEOUT_MAX_MS, EXECUTION_TIMEOUT_MIN_MS } from "../../domain/limits.js";
import { int } from "../../http/schemas.js";
import { containerResponse, cudaVersion, optionalContainerRequest } from "../shared/container-v2.js";

/** The service's v2 serverless endpoint (`/v2/serverless`), request and response. */

const Flashboot = z.enum(FLASHBOOT_MODES);
const EndpointType = z.enum(["QUEUE", "LOAD_BALANCER"]);

const QueueDelayScaling = z.strictObject({ type: z.literal("QUEUE_DELAY"), queueDelay: z.number().min(0.5).openapi({ description: "Seconds a request may wait before a worker is added" }) });
const RequestCountScaling = z.strictObject({ type: z.literal("REQUEST_COUNT"), requestCount: int().min(1) });
export const ScalingSchema = z.discriminatedUnion("type", [QueueDelayScaling, RequestCountScaling]).openapi("EndpointScaling");

export const WorkersSchema = z
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
export const CreateEndpointGpuSchema = z
  .strictObject({
    pools: z
      .array(z.string().min(1))
      .min(1)
      .openapi({ description: "Serverless GPU pool ids (GET /v2/catalog/gpus: pool); minipod also takes a GPU type id as a pool of that one type", example: ["ADA_24"] }),
    ...gpuShared,
    minCudaVersion: cudaVersion().optional(),
  })
  .openapi("CreateEndpointGpuConfig");
export const UpdateEndpointGpuSchema = z
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
  workers: WorkersSchema.optional(),
  cpu: cpuList.optional(),
};

export const CreateEndpointV2Schema = z
  .strictObject({
    ...common,
    name: z.string().min(1),
    type: EndpointType.openapi({ description: "QUEUE: jobs through /v2/{id}/run; LOAD_BALANCER: requests go to a worker's HTTP server at requestUrls.base (scaling must be REQUEST_COUNT)" }),
    scaling: ScalingSchema,
    gpu: CreateEndpointGpuSchema.optional(),
    templateId: z.string().min(1).optional(),
  })
  .refine((b) => b.templateId !== undefined || b.image !== undefined, { message: "expected image, or a templateId to take it from", path: ["image"] })
  .openapi("CreateEndpointRequest", { description: "Exactly one of gpu and cpu. Defaults: workers 0..3, idleTimeout 10 s, flashboot OFF" });

export const UpdateEndpointV2Schema = z
  .strictObject({ ...common, name: z.string().min(1).optional(), scaling: ScalingSchema.optional(), gpu: UpdateEndpointGpuSchema.optional(), templateId: z.string().min(1).optional() })
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
    scaling: ScalingSchema,
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
