import type { EndpointSpec } from "../endpoint.js";
import { ENDPOINT_GPU_COUNT_DEFAULT, ENDPOINT_SCALER_VALUE_DEFAULT } from "../limits.js";
import { DATA_CENTER_IDS, type ComputeType, type ScalerType } from "./catalog.js";

/** The account every resource belongs to: the emulator has one user. */
export const EMULATOR_USER_ID = "user_minipod";

/**
 * The v1 management fields of an endpoint, kept in `EndpointSpec.extra`. The scheduler reads
 * none of them (it runs on workersMin/Max, idleTimeout, executionTimeoutMs and the handler);
 * they are stored and reported as given, and billing reads `gpuTypeIds` and `gpuCount`.
 */
export interface EndpointFields {
  templateId: string | undefined;
  /** In priority order; every GPU type is always available here, so workers get the first. */
  gpuTypeIds: string[];
  gpuCount: number;
  computeType: ComputeType;
  scalerType: ScalerType;
  scalerValue: number;
  networkVolumeId: string | undefined;
  networkVolumeIds: string[] | undefined;
  dataCenterIds: string[];
  env: Record<string, string>;
  flashboot: boolean | undefined;
  allowedCudaVersions: string[] | undefined;
  minCudaVersion: string | undefined;
  cpuFlavorIds: string[] | undefined;
  vcpuCount: number | undefined;
  /** Goes up by one whenever the template, its image or the endpoint's env changes. */
  version: number;
}

export const ENDPOINT_FIELD_DEFAULTS: Readonly<EndpointFields> = {
  templateId: undefined,
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
  cpuFlavorIds: undefined,
  vcpuCount: undefined,
  version: 0,
};

const FIELD_NAMES = Object.keys(ENDPOINT_FIELD_DEFAULTS) as Array<keyof EndpointFields>;

/** The management fields of an endpoint, defaults filled in (config endpoints carry few). */
export function endpointFields(spec: EndpointSpec): EndpointFields {
  const out: Record<string, unknown> = { ...ENDPOINT_FIELD_DEFAULTS };
  for (const k of FIELD_NAMES) if (spec.extra[k] !== undefined) out[k] = spec.extra[k];
  return out as unknown as EndpointFields;
}

/** What goes into `EndpointSpec.extra`: the given fields, nothing undefined (it is JSON). */
export function toExtra(fields: Partial<EndpointFields>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([k, v]) => v !== undefined && FIELD_NAMES.includes(k as keyof EndpointFields)));
}
