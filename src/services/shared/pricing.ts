/**
 * Prices used by the billing records. They are the emulator's defaults, in USD, in the range of
 * the real service's public list prices but not a copy of them; the config's `pricing` overrides
 * any of them. Every default number lives here.
 */

/** USD per GPU per hour, by GPU type id (the v1 `gpuTypeIds` values). Pods and workers alike. */
export const DEFAULT_GPU_PRICE_PER_HOUR: Readonly<Record<string, number>> = {
  "NVIDIA GeForce RTX 3090": 0.46,
  "NVIDIA GeForce RTX 4090": 0.69,
  "NVIDIA GeForce RTX 5090": 0.94,
  "NVIDIA RTX A4000": 0.25,
  "NVIDIA RTX A4500": 0.34,
  "NVIDIA RTX A5000": 0.27,
  "NVIDIA RTX A6000": 0.49,
  "NVIDIA RTX 2000 Ada Generation": 0.24,
  "NVIDIA RTX 4000 Ada Generation": 0.26,
  "NVIDIA RTX 6000 Ada Generation": 0.77,
  "NVIDIA L4": 0.43,
  "NVIDIA L40": 0.99,
  "NVIDIA L40S": 0.86,
  "NVIDIA A40": 0.4,
  "NVIDIA A100 80GB PCIe": 1.64,
  "NVIDIA A100-SXM4-80GB": 1.74,
  "NVIDIA H100 PCIe": 2.39,
  "NVIDIA H100 80GB HBM3": 2.69,
  "NVIDIA H100 NVL": 2.79,
  "NVIDIA H200": 3.59,
  "NVIDIA B200": 5.98,
  "AMD Instinct MI300X OAM": 2.49,
};

/** USD per GPU per hour for a GPU type missing from the table. */
export const DEFAULT_UNLISTED_GPU_PRICE_PER_HOUR = 1.0;
/** USD per vCPU per hour, for CPU pods. */
export const DEFAULT_CPU_PRICE_PER_VCPU_HOUR = 0.02;
/** USD per GB per month of a STANDARD network volume. */
export const DEFAULT_VOLUME_PRICE_PER_GB_MONTH = 0.07;
/** USD per GB per month of a HIGH_PERFORMANCE network volume. */
export const DEFAULT_HIGH_PERFORMANCE_VOLUME_PRICE_PER_GB_MONTH = 0.14;
/** GPU type of a GPU pod or an endpoint's workers when `gpuTypeIds` names none. */
export const DEFAULT_GPU_TYPE_ID = "NVIDIA GeForce RTX 4090";
/** Data center of a pod or worker that names none. */
export const DEFAULT_DATA_CENTER_ID = "EU-RO-1";

/** A billing month: 30 days, so a GB-month is 720 GB-hours. */
export const BILLING_MONTH_MS = 30 * 24 * 3_600_000;

/** The price list in effect: defaults overridden by the config's `pricing`. */
export interface PriceList {
  gpuPerHour: Record<string, number>;
  unlistedGpuPerHour: number;
  cpuPerVcpuHour: number;
  volumePerGbMonth: number;
  highPerformanceVolumePerGbMonth: number;
}

/** Overrides as the config gives them; every field optional. */
export type PriceOverrides = Partial<PriceList>;

/** Merges overrides onto the defaults; GPU entries are added to (or replace) the default table. */
export function priceList(o: PriceOverrides = {}): PriceList {
  return {
    gpuPerHour: { ...DEFAULT_GPU_PRICE_PER_HOUR, ...o.gpuPerHour },
    unlistedGpuPerHour: o.unlistedGpuPerHour ?? DEFAULT_UNLISTED_GPU_PRICE_PER_HOUR,
    cpuPerVcpuHour: o.cpuPerVcpuHour ?? DEFAULT_CPU_PRICE_PER_VCPU_HOUR,
    volumePerGbMonth: o.volumePerGbMonth ?? DEFAULT_VOLUME_PRICE_PER_GB_MONTH,
    highPerformanceVolumePerGbMonth: o.highPerformanceVolumePerGbMonth ?? DEFAULT_HIGH_PERFORMANCE_VOLUME_PRICE_PER_GB_MONTH,
  };
}

/** USD per hour of one GPU of the type. */
export const gpuHourly = (p: PriceList, gpuTypeId: string): number => p.gpuPerHour[gpuTypeId] ?? p.unlistedGpuPerHour;
