import type { EndpointSpec } from "../../domain/endpoint.js";
import { ENDPOINT_GPU_COUNT_DEFAULT, ENDPOINT_SCALER_VALUE_DEFAULT } from "../../domain/limits.js";
import { DATA_CENTER_IDS, type ComputeType, type ScalerType } from "../shared/catalog/catalog.js";

/** The account every resource belongs to: the emulator has one user. */
export { EMULATOR_USER_ID } from "../shared/user.js";

/** FlashBoot modes (v2); v1's boolean `flashboot` reads and writes OFF and FLASHBOOT. */
export const FLASHBOOT_MODES = ["OFF", "FLASHBOOT", "PRIORITY_FLASHBOOT"] as const;
export type FlashBootMode = (typeof FLASHBOOT_MODES)[number];

/** One CPU configuration a CPU endpoint's workers may get: a flavor at a vCPU count. */
export interface CpuSelection {
  id: string;
  vcpuCount: number;
}

/** vCPUs of a CPU worker when the endpoint names no count (v1 EndpointCreateInput.vcpuCount default). */
export const ENDPOINT_VCPU_COUNT_DEFAULT = 2;
/** CPU flavor of a CPU endpoint that names none. */
export const ENDPOINT_CPU_FLAVOR_DEFAULT = "cpu3c";

/**
 * The management fields of an endpoint, kept in `EndpointSpec.extra`. The scheduler reads
 * none of them (it runs on workersMin/Max, idleTimeout, executionTimeoutMs and the handler);
 * they are stored and reported as given, and billing reads `gpuTypeIds`, `gpuCount` and `cpu`.
 */
export interface EndpointFields {
  templateId: string | undefined;
  /** The template is the endpoint's own (made for it by the v2 surface) and goes with it. */
  templateBound: boolean;
  /** In priority order; every GPU type is always available here, so workers get the first. */
  gpuTypeIds: string[];
  gpuCount: number;
  computeType: ComputeType;
  scalerType: ScalerType;
  /** Seconds of queue delay (QUEUE_DELAY, may be fractional) or requests per worker (REQUEST_COUNT). */
  scalerValue: number;
  networkVolumeId: string | undefined;
  networkVolumeIds: string[] | undefined;
  dataCenterIds: string[];
  env: Record<string, string>;
  flashboot: FlashBootMode | undefined;
  allowedCudaVersions: string[] | undefined;
  minCudaVersion: string | undefined;
  /** CPU endpoints: the configurations workers may get, in order; workers get the first. */
  cpu: CpuSelection[] | undefined;
  /** The Flash environment of a deployed app's endpoint (its workers run the environment's active build). */
  flashEnvironmentId: string | undefined;
  /** Goes up by one with every release: a change of what the workers run (template, image, env). */
  version: number;
}

export const ENDPOINT_FIELD_DEFAULTS: Readonly<EndpointFields> = {
  templateId: undefined,
  templateBound: false,
  gpuTypeIds: [],
  gpuCount: ENDPOINT_GPU_COUNT_DEFAULT,
  computeType: "GPU",
  scalerType: "QUEUE_DELAY",
  scalerValue: ENDPOINT_SCALER_VALUE_DEFAULT,
  networkVolumeId: undefined,
  networkVolumeIds: undefined,
  dataCenterIds: [...DATA_CENTER_IDS],
  env: {},
  flashboot: undefined,
  allowedCudaVersions: undefined,
  minCudaVersion: undefined,
  cpu: undefined,
  flashEnvironmentId: undefined,
  version: 0,
};

const FIELD_NAMES = Object.keys(ENDPOINT_FIELD_DEFAULTS) as Array<keyof EndpointFields>;

/** The management fields of an endpoint, defaults filled in (config endpoints carry few). */
export function endpointFields(spec: EndpointSpec): EndpointFields {
  const out: Record<string, unknown> = { ...ENDPOINT_FIELD_DEFAULTS };
  for (const k of FIELD_NAMES) if (spec.extra[k] !== undefined) out[k] = spec.extra[k];
  const fields = out as unknown as EndpointFields;
  // Written before v2: flashboot a boolean, the CPU selection as v1 spells it.
  const flashboot = spec.extra.flashboot as unknown;
  if (typeof flashboot === "boolean") fields.flashboot = flashboot ? "FLASHBOOT" : "OFF";
  if (fields.cpu === undefined && (Array.isArray(spec.extra.cpuFlavorIds) || typeof spec.extra.vcpuCount === "number")) {
    fields.cpu = cpuFromV1(spec.extra.cpuFlavorIds as string[] | undefined, spec.extra.vcpuCount as number | undefined, undefined);
  }
  return fields;
}

/** v1's `cpuFlavorIds` and `vcpuCount` as CPU selections; what is not given stays as it was in `current`. */
export function cpuFromV1(flavorIds: readonly string[] | undefined, vcpuCount: number | undefined, current: CpuSelection[] | undefined): CpuSelection[] {
  const ids = flavorIds?.length ? flavorIds : current?.length ? [...new Set(current.map((c) => c.id))] : [ENDPOINT_CPU_FLAVOR_DEFAULT];
  const count = vcpuCount ?? current?.[0]?.vcpuCount ?? ENDPOINT_VCPU_COUNT_DEFAULT;
  return ids.map((id) => ({ id, vcpuCount: count }));
}

/** An endpoint's `extra` with the management fields in `fields` (those undefined removed), what else it holds kept. */
export function withFields(extra: Record<string, unknown>, fields: EndpointFields): Record<string, unknown> {
  const rest = Object.fromEntries(Object.entries(extra).filter(([k]) => !FIELD_NAMES.includes(k as keyof EndpointFields) && !LEGACY_NAMES.has(k)));
  return { ...rest, ...toExtra(fields) };
}

/** Keys of `extra` written before v2, read by `endpointFields`, replaced at the next change. */
const LEGACY_NAMES = new Set(["cpuFlavorIds", "vcpuCount"]);

/** What goes into `EndpointSpec.extra`: the given fields, nothing undefined (it is JSON). */
export function toExtra(fields: Partial<EndpointFields>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([k, v]) => v !== undefined && FIELD_NAMES.includes(k as keyof EndpointFields)));
}
