import { z } from "@hono/zod-openapi";
import { DATA_CENTER_IDS } from "../shared/catalog/catalog.js";
import { POD_STATUSES } from "./pod.js";
import { boolQuery } from "../../http/query-params.js";
import { int } from "../../http/schemas.js";
import { containerResponse, cudaVersion, MountsSchema, optionalContainerRequest } from "../shared/container-v2.js";

/** The service's v2 pod (`/v2/pods`), request and response. */

export const POD_ACTIONS = ["start", "stop", "restart", "terminate"] as const;
const Cloud = z.enum(["SECURE", "COMMUNITY"]);

const GpuRequest = z
  .strictObject({
    id: z.string().min(1).openapi({ description: "A GPU type id (GET /v2/catalog/gpus)", example: "NVIDIA GeForce RTX 4090" }),
    count: int().min(1).optional(),
    allowedCudaVersions: z.array(cudaVersion()).optional(),
    minCudaVersion: cudaVersion().optional(),
  })
  .openapi("CreateGpuConfig");
const CpuRequest = z.strictObject({ id: z.string().min(1), vcpuCount: int().min(2) }).openapi("CreateCpuConfig");

export const CreatePodV2Schema = z
  .strictObject({
    ...optionalContainerRequest,
    name: z.string().min(1),
    cloud: Cloud.optional(),
    cpu: CpuRequest.optional(),
    dataCenterIds: z.array(z.enum(DATA_CENTER_IDS)).optional(),
    globalNetworking: z.boolean().optional(),
    gpu: GpuRequest.optional(),
    mounts: MountsSchema.optional(),
    startJupyter: z.boolean().optional(),
    startSsh: z.boolean().optional(),
    templateId: z.string().min(1).optional(),
  })
  .refine((b) => b.templateId !== undefined || b.image !== undefined, { message: "expected image, or a templateId to take it from", path: ["image"] })
  .openapi("CreatePodRequest", { description: "Exactly one of gpu and cpu. The pod is RUNNING at once" });

export const UpdatePodV2Schema = z
  .strictObject({
    ...optionalContainerRequest,
    globalNetworking: z.boolean().optional(),
    locked: z.boolean().optional(),
    mounts: MountsSchema.optional(),
    name: z.string().min(1).optional(),
    templateId: z.string().min(1).optional(),
  })
  .openapi("UpdatePodRequest", { description: "Only the fields given change; a change beyond name and locked restarts a running pod's container" });

export const PodActionSchema = z.strictObject({ action: z.enum(POD_ACTIONS) }).openapi("PodActionRequest");

export const ListPodsV2Query = z.object({ includeClusterPods: boolQuery().openapi({ param: { name: "includeClusterPods", in: "query" }, description: "Also the pods of clusters" }) });

const Utilization = z.object({ util: z.int() });
export const PodV2Schema = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(POD_STATUSES),
    actions: z.array(z.enum(POD_ACTIONS)),
    ...containerResponse,
    mounts: MountsSchema,
    gpu: z.object({ id: z.string(), count: z.int() }).optional(),
    cpu: z.object({ id: z.string(), vcpuCount: z.int(), memory: z.int() }).optional(),
    cloud: Cloud,
    dataCenterId: z.string().nullable(),
    cudaVersion: z.string().nullable(),
    ssh: z.object({ proxy: z.null(), direct: z.null() }).openapi({ description: "minipod runs no container: there is no SSH endpoint" }),
    cluster: z
      .object({ id: z.string(), rank: z.int().nullable(), role: z.enum(["SLURM_CONTROLLER", "SLURM_COMPUTE", "RAY_HEAD", "RAY_WORKER"]).optional(), ip: z.string().optional() })
      .optional(),
    template: z.string().nullable(),
    cost: z.number(),
    locked: z.boolean(),
    globalNetworking: z.object({ enabled: z.boolean() }),
    runtime: z
      .object({
        uptime: z.int(),
        gpus: z.array(z.object({ util: z.int(), memoryUtil: z.int() })),
        cpu: Utilization,
        memory: Utilization,
        ports: z.array(z.object({ private: z.int(), public: z.int().nullable(), type: z.string(), ip: z.string().nullable() })),
      })
      .nullable(),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
  })
  .openapi("PodV2");

export type PodV2 = z.infer<typeof PodV2Schema>;
export type CreatePodV2 = z.output<typeof CreatePodV2Schema>;
export type UpdatePodV2 = z.output<typeof UpdatePodV2Schema>;
