/**
 * CPU flavors: the v1 pod list's ids, with the emulator's vCPU ranges and RAM per vCPU (close to
 * the real service's public catalog, not a copy of it). A CPU pod or worker gets
 * `vcpuCount × ramGbPerVcpu` GB of memory.
 */
export interface CpuFlavorInfo {
  id: string;
  name: string;
  group: string;
  vcpu: { min: number; max: number };
  ramGbPerVcpu: number;
}

export const CPU_FLAVORS: readonly CpuFlavorInfo[] = [
  { id: "cpu3c", name: "Compute-Optimized", group: "Gen 3", vcpu: { min: 2, max: 32 }, ramGbPerVcpu: 2 },
  { id: "cpu3g", name: "General Purpose", group: "Gen 3", vcpu: { min: 2, max: 32 }, ramGbPerVcpu: 4 },
  { id: "cpu3m", name: "Memory-Optimized", group: "Gen 3", vcpu: { min: 2, max: 16 }, ramGbPerVcpu: 8 },
  { id: "cpu5c", name: "Compute-Optimized", group: "Gen 5", vcpu: { min: 2, max: 32 }, ramGbPerVcpu: 2 },
  { id: "cpu5g", name: "General Purpose", group: "Gen 5", vcpu: { min: 2, max: 32 }, ramGbPerVcpu: 4 },
  { id: "cpu5m", name: "Memory-Optimized", group: "Gen 5", vcpu: { min: 2, max: 16 }, ramGbPerVcpu: 8 },
];

const BY_ID = new Map(CPU_FLAVORS.map((f) => [f.id, f]));

export const cpuFlavor = (id: string): CpuFlavorInfo | undefined => BY_ID.get(id);

/** RAM of `vcpuCount` vCPUs of a flavor, GB (4 GB per vCPU for a flavor the catalog does not know). */
export const cpuMemoryGb = (flavorId: string, vcpuCount: number): number => Math.round(vcpuCount * (BY_ID.get(flavorId)?.ramGbPerVcpu ?? 4));

/** Why a vCPU count does not fit a flavor (a power of two within its range), or undefined. */
export function vcpuProblem(flavorId: string, vcpuCount: number): string | undefined {
  const f = BY_ID.get(flavorId);
  if (!f) return `unknown CPU flavor "${flavorId}"; use one of ${CPU_FLAVORS.map((c) => c.id).join(", ")} (GET /v2/catalog/cpus)`;
  if (vcpuCount < f.vcpu.min || vcpuCount > f.vcpu.max || (vcpuCount & (vcpuCount - 1)) !== 0) {
    return `${flavorId} takes a power of two from ${f.vcpu.min} to ${f.vcpu.max} vCPUs, not ${vcpuCount}`;
  }
  return undefined;
}
