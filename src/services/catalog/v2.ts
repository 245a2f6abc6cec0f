import { z, createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { GPU_PRODUCTS, cpuAvailability, gpuAvailability, gpuInCountries, wantsAvailability } from "./availability.js";
import { boolQuery, listQuery } from "../../http/query-params.js";
import { intQuery, ERROR_RESPONSES, json, problem } from "../../http/schemas.js";
import { EmulatorError } from "../../domain/errors.js";
import { CPU_FLAVORS, cpuFlavor, type CpuFlavorInfo } from "../shared/catalog/cpu-catalog.js";
import { DATA_CENTERS, dataCenter, type DataCenterInfo } from "../shared/catalog/datacenter-catalog.js";
import { GPU_TYPES, gpuType, type GpuTypeInfo } from "../shared/catalog/gpu-catalog.js";
import { gpuHourly } from "../shared/pricing.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { idParams } from "../shared/rest.js";
import { TemplateV2Schema } from "../templates/index.js";

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

export const GpuTypeV2Schema = z
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

export const CpuTypeV2Schema = z
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
export const DataCenterV2Schema = z
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

const TAG = "Catalog";
const { 404: _notFound, ...listErrors } = ERROR_RESPONSES;
const GPU_FILTERS = ["product", "count", "cloud", "countryCodes", "cudaVersions", "minCudaVersion"];

const listRoute = <Q extends z.ZodObject, S extends z.ZodType>(operationId: string, path: string, summary: string, description: string, query: Q, schema: S) =>
  createRoute({ method: "get", path, operationId, tags: [TAG], summary, description, request: { query }, responses: { 200: json(schema, "OK"), ...listErrors } });

const itemRoute = <Q extends z.ZodObject, S extends z.ZodType>(operationId: string, path: string, summary: string, description: string, query: Q, schema: S, item: string) =>
  createRoute({
    method: "get",
    path,
    operationId,
    tags: [TAG],
    summary,
    description,
    request: { params: idParams("id"), query },
    responses: { 200: json(schema, "OK"), ...ERROR_RESPONSES, 404: problem(`No ${item} with this id`) },
  });

const STOCK = "minipod never runs out: what is offered is HIGH in every data center, and every CUDA version is available.";
const listGpus = listRoute(
  "listGpuTypes",
  "/v2/catalog/gpus",
  "List GPU types",
  `Every GPU type with its serverless pool, VRAM, per-cloud machine size and the emulator's prices (pricing of the config). ${STOCK}`,
  GpuQuery,
  z.object({ gpus: z.array(GpuTypeV2Schema) }),
);
const getGpu = itemRoute("getGpuType", "/v2/catalog/gpus/{id}", "Get a GPU type", STOCK, GpuQuery, GpuTypeV2Schema, "GPU type");
const listCpus = listRoute(
  "listCpuTypes",
  "/v2/catalog/cpus",
  "List CPU flavors",
  `Every CPU flavor with its vCPU range, RAM per vCPU and price. ${STOCK}`,
  CpuQuery,
  z.object({ cpus: z.array(CpuTypeV2Schema) }),
);
const getCpu = itemRoute("getCpuType", "/v2/catalog/cpus/{id}", "Get a CPU flavor", STOCK, CpuQuery, CpuTypeV2Schema, "CPU flavor");
const listDcs = listRoute(
  "listDataCenters",
  "/v2/catalog/datacenters",
  "List data centers",
  "Filters combine (regions: any; networkVolumeTypes, compliance: all).",
  DataCenterQuery,
  z.object({ dataCenters: z.array(DataCenterV2Schema) }),
);
const getDc = itemRoute("getDataCenter", "/v2/catalog/datacenters/{id}", "Get a data center", "", DataCenterGetQuery, DataCenterV2Schema, "data center");
const listPublicTemplates = listRoute(
  "listPublicTemplates",
  "/v2/catalog/templates",
  "List public templates (none here)",
  "minipod has no public template catalog: every slice is empty. Your own templates are under /v2/templates.",
  TemplateCatalogQuery,
  z.object({ templates: z.array(TemplateV2Schema) }),
);

/** The catalog (`/v2/catalog/...`) from minipod's own tables, priced by the config's pricing. */
export function catalogRoutes(core: Pick<ViewContext, "prices">, router: OpenAPIHono<AppEnv>): void {
  const gpu = (g: GpuTypeInfo, q: GpuQuery) => {
    const price = gpuHourly(core.prices, g.id);
    return {
      id: g.id,
      name: g.name,
      pool: g.pool,
      manufacturer: g.manufacturer,
      memory: g.memoryGb,
      secure: g.maxCount.secure > 0,
      community: g.maxCount.community > 0,
      price: { secure: price, community: price, ...(g.pool ? { serverless: price } : {}) },
      maxCount: g.maxCount,
      ...(wantsAvailability(q, GPU_FILTERS) ? gpuAvailability(g, q) : {}),
    };
  };
  const cpu = (f: CpuFlavorInfo, q: z.output<typeof CpuQuery>) => ({
    id: f.id,
    name: f.name,
    group: f.group,
    vcpu: f.vcpu,
    ramGbPerVcpu: f.ramGbPerVcpu,
    price: { securePerVcpu: core.prices.cpuPerVcpuHour, serverlessPerVcpu: core.prices.cpuPerVcpuHour },
    ...(wantsAvailability(q, ["product", "vcpuCount"]) ? cpuAvailability(f, q) : {}),
  });
  const dc = (d: DataCenterInfo, include: string[] | undefined) => ({
    id: d.id,
    name: d.name,
    region: d.region,
    globalNetwork: d.globalNetwork,
    networkVolumeTypes: d.networkVolumeTypes,
    compliance: d.compliance,
    ...(include?.includes("GPU_AVAILABILITY") ? { gpuAvailability: GPU_TYPES.map((g) => ({ id: g.id, name: g.name, availability: "HIGH" as const })) } : {}),
    ...(include?.includes("CPU_AVAILABILITY") ? { cpuAvailability: CPU_FLAVORS.map((f) => ({ id: f.id, name: f.name, availability: "HIGH" as const })) } : {}),
  });
  const notFound = (what: string, id: string, list: string) => new EmulatorError("NOT_FOUND", `${what} "${id}" not found; GET ${list} lists them`);

  router.openapi(listGpus, (c) => {
    const q = c.req.valid("query") as GpuQuery;
    const wants = wantsAvailability(q, GPU_FILTERS);
    const kept = wants && !gpuInCountries(q.countryCodes) ? [] : GPU_TYPES;
    return c.json({ gpus: kept.map((g) => gpu(g, q)) }, 200);
  });
  router.openapi(getGpu, (c) => {
    const id = c.req.valid("param").id;
    const g = gpuType(id);
    if (!g) throw notFound("GPU type", id, "/v2/catalog/gpus");
    return c.json(gpu(g, c.req.valid("query") as GpuQuery), 200);
  });
  router.openapi(listCpus, (c) => {
    const q = c.req.valid("query") as z.output<typeof CpuQuery>;
    return c.json({ cpus: CPU_FLAVORS.map((f) => cpu(f, q)) }, 200);
  });
  router.openapi(getCpu, (c) => {
    const id = c.req.valid("param").id;
    const f = cpuFlavor(id);
    if (!f) throw notFound("CPU flavor", id, "/v2/catalog/cpus");
    return c.json(cpu(f, c.req.valid("query") as z.output<typeof CpuQuery>), 200);
  });
  router.openapi(listDcs, (c) => {
    const q = c.req.valid("query") as z.output<typeof DataCenterQuery>;
    const kept = DATA_CENTERS.filter(
      (d) =>
        (!q.regions?.length || (q.regions as string[]).includes(d.region)) &&
        (q.networkVolumeTypes ?? []).every((t) => d.networkVolumeTypes.includes(t)) &&
        (q.compliance ?? []).every((x) => d.compliance.includes(x)) &&
        (q.globalNetwork === undefined || d.globalNetwork === q.globalNetwork),
    );
    return c.json({ dataCenters: kept.map((d) => dc(d, q.include)) }, 200);
  });
  router.openapi(getDc, (c) => {
    const id = c.req.valid("param").id;
    const d = dataCenter(id);
    if (!d) throw notFound("data center", id, "/v2/catalog/datacenters");
    return c.json(dc(d, (c.req.valid("query") as z.output<typeof DataCenterGetQuery>).include), 200);
  });
  router.openapi(listPublicTemplates, (c) => c.json({ templates: [] }, 200));
}
