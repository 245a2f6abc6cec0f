import { z } from "zod";
import { PRICE_MAX_USD } from "../../domain/bounds.js";
import {
  DEFAULT_CPU_PRICE_PER_VCPU_HOUR,
  DEFAULT_HIGH_PERFORMANCE_VOLUME_PRICE_PER_GB_MONTH,
  DEFAULT_UNLISTED_GPU_PRICE_PER_HOUR,
  DEFAULT_VOLUME_PRICE_PER_GB_MONTH,
} from "./pricing.js";

const usd = () => z.number().min(0).max(PRICE_MAX_USD);

/** Prices of the billing records (`/v1/billing/...`), each optional over the built-in defaults. */
export const PricingConfigSchema = z.strictObject({
  gpuPerHour: z
    .record(z.string().min(1), usd())
    .optional()
    .describe("USD per GPU per hour by GPU type id, for pods and serverless workers; added to (or replacing entries of) the built-in table"),
  unlistedGpuPerHour: usd().optional().describe(`USD per GPU per hour of a GPU type missing from the table; default ${DEFAULT_UNLISTED_GPU_PRICE_PER_HOUR}`),
  cpuPerVcpuHour: usd().optional().describe(`USD per vCPU per hour, for CPU pods and CPU workers; default ${DEFAULT_CPU_PRICE_PER_VCPU_HOUR}`),
  volumePerGbMonth: usd().optional().describe(`USD per GB per 30-day month of a STANDARD network volume; default ${DEFAULT_VOLUME_PRICE_PER_GB_MONTH}`),
  highPerformanceVolumePerGbMonth: usd()
    .optional()
    .describe(`USD per GB per 30-day month of a HIGH_PERFORMANCE network volume; default ${DEFAULT_HIGH_PERFORMANCE_VOLUME_PRICE_PER_GB_MONTH}`),
});
