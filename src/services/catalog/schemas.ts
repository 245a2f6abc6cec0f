import { z } from "@hono/zod-openapi";
import { GPU_PRODUCTS } from "./availability.js";
import { boolQuery, listQuery } from "../../http/query-params.js";
import { intQuery } from "../../http/schemas.js";

/** The service's v2 catalog: GPU types, CPU flavors, data centers, public templates. */

const Availability = z.enum(["NONE", "LOW", "MEDIUM", "HIGH"]);
const DataCenterAvailability = z.object({ id: z.string(), name: z.string(), availability: Availability });
const q = <T extends z.ZodType>(name: string, schema: T, description: string) => schema.openapi({ param: { name, in: "query" }, description });

export const GpuQuery = z.object({
  include: q("include", listQuery(z.enum(["AVAILABILITY"])), "AVAILABILITY adds availability, dataCenters and cudaVersions (needs product)"),
  product: q("product", listQuery(z.enum(GPU_PRODUCTS)), "Availability for POD, CLUSTER, SERVERLESS (with include=AVAILABILITY only)"),
  count: q("count", intQuery().pipe(z.int().min(1)).optional(), "GPUs per pod or worker (default 1)"),
  cloud: q("cloud", z.enum(["SECURE", "COMMUNITY"]).optional(), "Default SECURE"),
  countryCodes: q("countryCodes", listQuery(z.string().regex(/^[A-Z]{2}$/, "expected an ISO 3166-1 alpha-2 code such as FR")), "Only data centers in these countries"),
  cudaVersions: q("cudaVersions", listQuery(z.string().regex(/^\d+\.\d+$/, "expected major.minor, such as 12.8")), "Exactly these CUDA versions"),
  minCudaVersion: q("minCudaVersion", z.string().regex(/^\d+(\.\d+)?$/, "expected major or major.minor, such as 12 or 12.1").optional(), "CUDA versions from this one up"),
});
export type GpuQuery = z.output<typeof GpuQuery>;

export const CpuQuery = z.object({
  include: GpuQuery.shape.include,
  product: q("product", listQuery(z.enum(["POD", "SERVERLESS"])), "Availability for POD, SERVERLESS (with include=AVAILABILITY only)"),
  vcpuCount: q("vcpuCount", intQuery().pipe(z.int().min(2)).optional(), "vCPUs (a power of two)"),
});
export type CpuQuery = z.output<typeof CpuQuery>;

export const DataCenterQuery = z.object({
  include: q("include", listQuery(z.enum(["GPU_AVAILABILITY", "CPU_AVAILABILITY"])), "Add gpuAvailability, cpuAvailability"),
  regions: q("regions", listQuery(z.enum(["NORTH_AMERICA", "SOUTH_AMERICA", "EUROPE", "ASIA", "MIDDLE_EAST", "AFRICA", "OCEANIA", "ANTARCTICA", "UNKNOWN"])), "Any of these regions"),
  networkVolumeTypes: q("networkVolumeTypes", listQuery(z.enum(["STANDARD", "HIGH_PERFORMANCE"])), "Every one of these volume types"),
  compliance: q("compliance", listQuery(z.string().min(1)), "Every one of these certifications"),
  globalNetwork: q("globalNetwork", boolQuery(), "Only those with (true) or without (false) the global network"),
});
export type DataCenterQuery = z.output<typeof DataCenterQuery>;
export const DataCenterGetQuery = z.object({ include: DataCenterQuery.shape.include });

export const TemplateCatalogQuery = z.object({ source: q("source", z.enum(["official", "verified", "community"]).default("official"), "Which slice of the public catalog") });

export const GpuTypeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    pool: z.string().nullable(),
    manufacturer: z.enum(["NVIDIA", "AMD", "UNKNOWN"]),
    memory: z.int(),
    secure: z.boolean(),
    community: z.boolean(),
    price: z.object({ secure: z.number(), community: z.number(), serverless: z.number().optional() }),
    maxCount: z.object({ secure: z.int(), community: z.int() }),
    availability: Availability.optional(),
    dataCenters: z.array(DataCenterAvailability).optional(),
    cudaVersions: z.array(z.object({ version: z.string(), available: z.boolean() })).optional(),
  })
  .openapi("GpuType");

export const CpuTypeSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    group: z.string(),
    vcpu: z.object({ min: z.int(), max: z.int() }),
    ramGbPerVcpu: z.number(),
    price: z.object({ securePerVcpu: z.number(), serverlessPerVcpu: z.number() }),
    availability: Availability.optional(),
    dataCenters: z.array(DataCenterAvailability).optional(),
  })
  .openapi("CpuType");

const Resource = z.object({ id: z.string(), name: z.string(), availability: Availability });
export const DataCenterSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    region: z.string(),
    globalNetwork: z.boolean(),
    networkVolumeTypes: z.array(z.string()),
    compliance: z.array(z.string()),
    gpuAvailability: z.array(Resource).optional(),
    cpuAvailability: z.array(Resource).optional(),
  })
  .openapi("DataCenter");
