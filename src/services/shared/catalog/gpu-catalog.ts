import { GPU_TYPE_IDS } from "./catalog.js";

/**
 * What the emulator's catalog says of each GPU type of the v1 list: display name, VRAM, the
 * serverless pool it belongs to (the v2 `gpu.pools` of an endpoint), and the largest GPU count of
 * one machine in each cloud. minipod's own table, close to the real service's public catalog but
 * not a copy of it; every type is always in stock here.
 */
export interface GpuTypeInfo {
  id: string;
  name: string;
  manufacturer: "NVIDIA" | "AMD";
  memoryGb: number;
  /** Serverless pool id; null when the type is not offered to serverless endpoints. */
  pool: string | null;
  maxCount: { secure: number; community: number };
}

/** [id, display name, VRAM GB, pool, max GPUs per machine secure, community]. */
const ROWS: ReadonlyArray<readonly [string, string, number, string | null, number, number]> = [
  ["NVIDIA GeForce RTX 4090", "RTX 4090", 24, "ADA_24", 8, 8],
  ["NVIDIA A40", "A40", 48, "AMPERE_48", 8, 8],
  ["NVIDIA RTX A5000", "RTX A5000", 24, "AMPERE_24", 8, 8],
  ["NVIDIA GeForce RTX 5090", "RTX 5090", 32, "ADA_32_PRO", 8, 8],
  ["NVIDIA H100 80GB HBM3", "H100 SXM", 80, "ADA_80_PRO", 8, 0],
  ["NVIDIA GeForce RTX 3090", "RTX 3090", 24, "AMPERE_24", 8, 8],
  ["NVIDIA RTX A4500", "RTX A4500", 20, "AMPERE_16", 8, 8],
  ["NVIDIA L40S", "L40S", 48, "ADA_48_PRO", 8, 8],
  ["NVIDIA H200", "H200 SXM", 141, "HOPPER_141", 8, 0],
  ["NVIDIA L4", "L4", 24, "AMPERE_24", 8, 8],
  ["NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", 48, "ADA_48_PRO", 8, 8],
  ["NVIDIA A100-SXM4-80GB", "A100 SXM", 80, "AMPERE_80", 8, 8],
  ["NVIDIA RTX 4000 Ada Generation", "RTX 4000 Ada", 20, "AMPERE_16", 8, 8],
  ["NVIDIA RTX A6000", "RTX A6000", 48, "AMPERE_48", 8, 8],
  ["NVIDIA A100 80GB PCIe", "A100 PCIe", 80, "AMPERE_80", 8, 8],
  ["NVIDIA RTX 2000 Ada Generation", "RTX 2000 Ada", 16, "AMPERE_16", 8, 8],
  ["NVIDIA RTX A4000", "RTX A4000", 16, "AMPERE_16", 8, 8],
  ["NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000", 96, "BLACKWELL_96", 8, 0],
  ["NVIDIA H100 PCIe", "H100 PCIe", 80, "ADA_80_PRO", 8, 8],
  ["NVIDIA H100 NVL", "H100 NVL", 94, "ADA_80_PRO", 8, 0],
  ["NVIDIA L40", "L40", 48, "ADA_48_PRO", 8, 8],
  ["NVIDIA B200", "B200", 180, "BLACKWELL_180", 8, 0],
  ["NVIDIA GeForce RTX 3080 Ti", "RTX 3080 Ti", 12, null, 0, 8],
  ["NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 WK", 96, "BLACKWELL_96", 8, 0],
  ["NVIDIA GeForce RTX 3080", "RTX 3080", 10, null, 0, 8],
  ["NVIDIA GeForce RTX 3070", "RTX 3070", 8, null, 0, 8],
  ["AMD Instinct MI300X OAM", "MI300X", 192, null, 8, 0],
  ["NVIDIA GeForce RTX 4080 SUPER", "RTX 4080 SUPER", 16, null, 0, 8],
  ["Tesla V100-PCIE-16GB", "Tesla V100", 16, null, 0, 8],
  ["Tesla V100-SXM2-32GB", "V100 SXM2 32GB", 32, null, 8, 8],
  ["NVIDIA RTX 5000 Ada Generation", "RTX 5000 Ada", 32, "ADA_32_PRO", 8, 8],
  ["NVIDIA GeForce RTX 4070 Ti", "RTX 4070 Ti", 12, null, 0, 8],
  ["NVIDIA RTX 4000 SFF Ada Generation", "RTX 4000 Ada SFF", 20, "AMPERE_16", 8, 8],
  ["NVIDIA GeForce RTX 3090 Ti", "RTX 3090 Ti", 24, "AMPERE_24", 0, 8],
  ["NVIDIA RTX A2000", "RTX A2000", 6, null, 0, 8],
  ["NVIDIA GeForce RTX 4080", "RTX 4080", 16, null, 0, 8],
  ["NVIDIA A30", "A30", 24, "AMPERE_24", 8, 8],
  ["NVIDIA GeForce RTX 5080", "RTX 5080", 16, null, 0, 8],
  ["Tesla V100-FHHL-16GB", "V100 FHHL", 16, null, 0, 8],
  ["NVIDIA H200 NVL", "H200 NVL", 143, "HOPPER_141", 8, 0],
  ["Tesla V100-SXM2-16GB", "V100 SXM2", 16, null, 0, 8],
  ["NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX PRO 6000 MaxQ", 96, "BLACKWELL_96", 8, 0],
  ["NVIDIA A5000 Ada", "A5000 Ada", 32, "ADA_32_PRO", 8, 8],
  ["Tesla V100-PCIE-32GB", "V100 PCIe 32GB", 32, null, 0, 8],
  ["NVIDIA  RTX A4500", "RTX A4500 (alias)", 20, "AMPERE_16", 0, 8],
  ["NVIDIA  A30", "A30 (alias)", 24, "AMPERE_24", 0, 8],
  ["NVIDIA GeForce RTX 3080TI", "RTX 3080 Ti (alias)", 12, null, 0, 8],
  ["Tesla T4", "Tesla T4", 16, null, 0, 8],
  ["NVIDIA RTX A30", "RTX A30", 24, "AMPERE_24", 0, 8],
];

/** Every GPU type, in the v1 list's order. */
export const GPU_TYPES: readonly GpuTypeInfo[] = ROWS.map(([id, name, memoryGb, pool, secure, community]) => ({
  id,
  name,
  manufacturer: id.startsWith("AMD") ? "AMD" : "NVIDIA",
  memoryGb,
  pool,
  maxCount: { secure, community },
}));

const BY_ID = new Map(GPU_TYPES.map((g) => [g.id, g]));
if (BY_ID.size !== GPU_TYPE_IDS.length || GPU_TYPE_IDS.some((id) => !BY_ID.has(id))) throw new Error("gpu-catalog: the table must list every GPU type id once");

export const gpuType = (id: string): GpuTypeInfo | undefined => BY_ID.get(id);

/** Serverless pool ids, in the order they first appear. */
export const GPU_POOLS: readonly string[] = [...new Set(GPU_TYPES.flatMap((g) => (g.pool ? [g.pool] : [])))];

/** The GPU types of a pool, in table order. */
export const poolTypes = (pool: string): string[] => GPU_TYPES.filter((g) => g.pool === pool).map((g) => g.id);

/**
 * The pool a GPU type is shown in. A type outside every serverless pool (or unknown to the
 * catalog, as a config may name) is its own pool: minipod's convention, so that any v1 list of
 * types reads back as a v2 selection and a v2 selection of pools means exactly those types.
 */
export const poolOf = (typeId: string): string => BY_ID.get(typeId)?.pool ?? typeId;

/** The types a pool id stands for: a pool's members, or the one type a type id names. */
export function typesOf(pool: string): string[] | undefined {
  const members = poolTypes(pool);
  if (members.length) return members;
  return BY_ID.has(pool) ? [pool] : undefined;
}

/** A v1 list of GPU types as the v2 selection: pools in order of first use, minus the types of those pools not listed. */
export function gpuSelection(typeIds: readonly string[]): { pools: string[]; excludedTypes: string[] } {
  const pools = [...new Set(typeIds.map(poolOf))];
  const listed = new Set(typeIds);
  const excludedTypes = pools.flatMap((p) => (typesOf(p) ?? [p]).filter((t) => !listed.has(t)));
  return { pools, excludedTypes };
}
