import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { EmulatorError } from "../../domain/errors.js";
import { cpuAvailability, gpuAvailability, gpuInCountries, wantsAvailability } from "./availability.js";
import { CPU_FLAVORS, cpuFlavor, type CpuFlavorInfo } from "../shared/catalog/cpu-catalog.js";
import { DATA_CENTERS, dataCenter, type DataCenterInfo } from "../shared/catalog/datacenter-catalog.js";
import { GPU_TYPES, gpuType, type GpuTypeInfo } from "../shared/catalog/gpu-catalog.js";
import { gpuHourly } from "../shared/pricing.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { idParams } from "../shared/rest.js";
import { ERROR_RESPONSES, json, problem } from "../../http/schemas.js";
import { TemplateV2Schema } from "../templates/index.js";
import { CpuQuery, CpuTypeSchema, DataCenterGetQuery, DataCenterQuery, DataCenterSchema, GpuQuery, GpuTypeSchema, TemplateCatalogQuery, type GpuQuery as GpuQ } from "./schemas.js";

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
  z.object({ gpus: z.array(GpuTypeSchema) }),
);
const getGpu = itemRoute("getGpuType", "/v2/catalog/gpus/{id}", "Get a GPU type", STOCK, GpuQuery, GpuTypeSchema, "GPU type");
const listCpus = listRoute(
  "listCpuTypes",
  "/v2/catalog/cpus",
  "List CPU flavors",
  `Every CPU flavor with its vCPU range, RAM per vCPU and price. ${STOCK}`,
  CpuQuery,
  z.object({ cpus: z.array(CpuTypeSchema) }),
);
const getCpu = itemRoute("getCpuType", "/v2/catalog/cpus/{id}", "Get a CPU flavor", STOCK, CpuQuery, CpuTypeSchema, "CPU flavor");
const listDcs = listRoute(
  "listDataCenters",
  "/v2/catalog/datacenters",
  "List data centers",
  "Filters combine (regions: any; networkVolumeTypes, compliance: all).",
  DataCenterQuery,
  z.object({ dataCenters: z.array(DataCenterSchema) }),
);
const getDc = itemRoute("getDataCenter", "/v2/catalog/datacenters/{id}", "Get a data center", "", DataCenterGetQuery, DataCenterSchema, "data center");
const listPublicTemplates = listRoute(
  "listPublicTemplates",
  "/v2/catalog/templates",
  "List public templates (none here)",
  "minipod has no public template catalog: every slice is empty. Your own templates are under /v2/templates.",
  TemplateCatalogQuery,
  z.object({ templates: z.array(TemplateV2Schema) }),
);

/** The catalog (`/v2/catalog/...`) from minipod's own tables, priced by the config's pricing. */
export function catalogRoutes(core: ViewContext, router: OpenAPIHono<AppEnv>): void {
  const gpu = (g: GpuTypeInfo, q: GpuQ) => {
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
    const q = c.req.valid("query") as GpuQ;
    const wants = wantsAvailability(q, GPU_FILTERS);
    const kept = wants && !gpuInCountries(q.countryCodes) ? [] : GPU_TYPES;
    return c.json({ gpus: kept.map((g) => gpu(g, q)) }, 200);
  });
  router.openapi(getGpu, (c) => {
    const id = c.req.valid("param").id;
    const g = gpuType(id);
    if (!g) throw notFound("GPU type", id, "/v2/catalog/gpus");
    return c.json(gpu(g, c.req.valid("query") as GpuQ), 200);
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
