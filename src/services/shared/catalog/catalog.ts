/**
 * The closed lists of the management surface, as the real service's v1 description
 * (rest-v1.openapi.json, EndpointCreateInput) spells them, odd spacing included. That description
 * closes them (enums), so the emulator refuses any other value.
 */

/** GPU types an endpoint may ask for, in `gpuTypeIds` (priority order). */
export const GPU_TYPE_IDS = [
  "NVIDIA GeForce RTX 4090",
  "NVIDIA A40",
  "NVIDIA RTX A5000",
  "NVIDIA GeForce RTX 5090",
  "NVIDIA H100 80GB HBM3",
  "NVIDIA GeForce RTX 3090",
  "NVIDIA RTX A4500",
  "NVIDIA L40S",
  "NVIDIA H200",
  "NVIDIA L4",
  "NVIDIA RTX 6000 Ada Generation",
  "NVIDIA A100-SXM4-80GB",
  "NVIDIA RTX 4000 Ada Generation",
  "NVIDIA RTX A6000",
  "NVIDIA A100 80GB PCIe",
  "NVIDIA RTX 2000 Ada Generation",
  "NVIDIA RTX A4000",
  "NVIDIA RTX PRO 6000 Blackwell Server Edition",
  "NVIDIA H100 PCIe",
  "NVIDIA H100 NVL",
  "NVIDIA L40",
  "NVIDIA B200",
  "NVIDIA GeForce RTX 3080 Ti",
  "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
  "NVIDIA GeForce RTX 3080",
  "NVIDIA GeForce RTX 3070",
  "AMD Instinct MI300X OAM",
  "NVIDIA GeForce RTX 4080 SUPER",
  "Tesla V100-PCIE-16GB",
  "Tesla V100-SXM2-32GB",
  "NVIDIA RTX 5000 Ada Generation",
  "NVIDIA GeForce RTX 4070 Ti",
  "NVIDIA RTX 4000 SFF Ada Generation",
  "NVIDIA GeForce RTX 3090 Ti",
  "NVIDIA RTX A2000",
  "NVIDIA GeForce RTX 4080",
  "NVIDIA A30",
  "NVIDIA GeForce RTX 5080",
  "Tesla V100-FHHL-16GB",
  "NVIDIA H200 NVL",
  "Tesla V100-SXM2-16GB",
  "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
  "NVIDIA A5000 Ada",
  "Tesla V100-PCIE-32GB",
  "NVIDIA  RTX A4500",
  "NVIDIA  A30",
  "NVIDIA GeForce RTX 3080TI",
  "Tesla T4",
  "NVIDIA RTX A30",
] as const;

/** Data centers; also the default `dataCenterIds` of a new endpoint (all of them). */
export const DATA_CENTER_IDS = [
  "EU-RO-1",
  "CA-MTL-1",
  "EU-SE-1",
  "US-IL-1",
  "EUR-IS-1",
  "EU-CZ-1",
  "US-TX-3",
  "EUR-IS-2",
  "US-KS-2",
  "US-GA-2",
  "US-WA-1",
  "US-TX-1",
  "CA-MTL-3",
  "EU-NL-1",
  "US-TX-4",
  "US-CA-2",
  "US-NC-1",
  "OC-AU-1",
  "US-DE-1",
  "EUR-IS-3",
  "CA-MTL-2",
  "AP-JP-1",
  "EUR-NO-1",
  "EU-FR-1",
  "US-KS-3",
  "US-GA-1",
] as const;

export const CUDA_VERSIONS = [
  "13.0",
  "12.9",
  "12.8",
  "12.7",
  "12.6",
  "12.5",
  "12.4",
  "12.3",
  "12.2",
  "12.1",
  "12.0",
  "11.8",
] as const;

export const CPU_FLAVOR_IDS = [
  "cpu3c",
  "cpu3g",
  "cpu5c",
  "cpu5g",
] as const;

export const COMPUTE_TYPES = ["GPU", "CPU"] as const;
export const SCALER_TYPES = ["QUEUE_DELAY", "REQUEST_COUNT"] as const;

export type ComputeType = (typeof COMPUTE_TYPES)[number];
export type ScalerType = (typeof SCALER_TYPES)[number];
