import { EmulatorError } from "../../domain/errors.js";
import { CUDA_VERSIONS } from "../shared/catalog/catalog.js";
import type { CpuFlavorInfo } from "../shared/catalog/cpu-catalog.js";
import { DATA_CENTERS, type DataCenterInfo } from "../shared/catalog/datacenter-catalog.js";
import type { GpuTypeInfo } from "../shared/catalog/gpu-catalog.js";

/**
 * Catalog availability. minipod has no capacity to run out of: a GPU type or CPU flavor offered in
 * a product context is HIGH in every data center (of the countries asked for), and every CUDA
 * version machines report is available. What is not offered (a count above a machine's, a type in
 * no serverless pool, a cloud without the type) is NONE.
 */

export const GPU_PRODUCTS = ["POD", "CLUSTER", "SERVERLESS"] as const;
export type Level = "NONE" | "HIGH";

export interface GpuAvailabilityQuery {
  include?: string[] | undefined;
  product?: Array<(typeof GPU_PRODUCTS)[number]> | undefined;
  count?: number | undefined;
  cloud?: "SECURE" | "COMMUNITY" | undefined;
  countryCodes?: string[] | undefined;
  cudaVersions?: string[] | undefined;
  minCudaVersion?: string | undefined;
}

export interface Availability {
  availability: Level;
  dataCenters?: Array<{ id: string; name: string; availability: Level }>;
  cudaVersions?: Array<{ version: string; available: boolean }>;
}

const invalidQuery = (errors: string[]) => new EmulatorError("VALIDATION_FAILED", `the request query parameters are invalid: ${errors.join("; ")}`, { errors });

/** Whether availability was asked for; refuses the combinations the service refuses (400). */
export function wantsAvailability(q: { include?: string[] | undefined; product?: string[] | undefined } & Record<string, unknown>, onlyWith: readonly string[]): boolean {
  const wants = q.include?.includes("AVAILABILITY") ?? false;
  const errors: string[] = [];
  if (wants && !q.product?.length) errors.push("query.product: expected the product contexts availability is for (include=AVAILABILITY needs it)");
  if (!wants) for (const k of onlyWith) if (q[k] !== undefined) errors.push(`query.${k}: valid only with include=AVAILABILITY`);
  if (q.cudaVersions !== undefined && q.minCudaVersion !== undefined) errors.push("query.cudaVersions: cudaVersions and minCudaVersion exclude each other; send one");
  if (errors.length) throw invalidQuery(errors);
  return wants;
}

const inCountries = (countries: readonly string[] | undefined): DataCenterInfo[] => (countries?.length ? DATA_CENTERS.filter((d) => countries.includes(d.country)) : [...DATA_CENTERS]);

/** `major.minor` (or a bare major) compared as numbers. */
function atLeast(version: string, floor: string): boolean {
  const [a = 0, b = 0] = version.split(".").map(Number);
  const [c = 0, d = 0] = floor.split(".").map(Number);
  return a > c || (a === c && b >= d);
}

export function gpuAvailability(g: GpuTypeInfo, q: GpuAvailabilityQuery): Availability {
  const cloud = q.cloud ?? "SECURE";
  const count = q.count ?? 1;
  const perMachine = cloud === "SECURE" ? g.maxCount.secure : g.maxCount.community;
  const offered = (q.product ?? []).some((p) => (p === "SERVERLESS" ? g.pool !== null && count <= g.maxCount.secure : perMachine >= count && (p !== "CLUSTER" || cloud === "SECURE")));
  const cudas =
    g.manufacturer === "AMD"
      ? undefined
      : CUDA_VERSIONS.filter((v) => (q.cudaVersions ? q.cudaVersions.includes(v) : q.minCudaVersion === undefined || atLeast(v, q.minCudaVersion))).map((version) => ({ version, available: true }));
  const dcs = inCountries(q.countryCodes);
  if (!offered || dcs.length === 0 || cudas?.length === 0) return { availability: "NONE", ...(cudas ? { cudaVersions: cudas.map((c) => ({ ...c, available: false })) } : {}) };
  return { availability: "HIGH", dataCenters: dcs.map((d) => ({ id: d.id, name: d.name, availability: "HIGH" })), ...(cudas ? { cudaVersions: cudas } : {}) };
}

/** Whether a GPU type stays in a list filtered by countries: it does when a data center there has it. */
export const gpuInCountries = (countries: readonly string[] | undefined): boolean => inCountries(countries).length > 0;

export function cpuAvailability(f: CpuFlavorInfo, q: { product?: string[] | undefined; vcpuCount?: number | undefined }): Availability {
  const n = q.vcpuCount;
  const fits = n === undefined || (n >= f.vcpu.min && n <= f.vcpu.max && (n & (n - 1)) === 0);
  if (!fits || !q.product?.length) return { availability: "NONE" };
  return { availability: "HIGH", dataCenters: DATA_CENTERS.map((d) => ({ id: d.id, name: d.name, availability: "HIGH" })) };
}
