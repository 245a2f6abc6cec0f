import type { ManagedEndpoint } from "./endpoints.js";
import { EMULATOR_USER_ID } from "./endpoint-fields.js";
import { EXECUTION_TIMEOUT_DEFAULT_MS } from "../../domain/limits.js";
import type { SimWorker } from "../../domain/simulated-workers.js";
import type { ViewContext } from "../shared/service.js";
import { toTemplateView } from "../templates/index.js";
import type { EndpointView, WorkerView } from "./schemas.js";

export interface EndpointIncludes {
  includeTemplate?: boolean;
  includeWorkers?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An endpoint as the v1 surface shows it; times are virtual time in ISO 8601. */
export function toEndpointView(core: ViewContext, { spec, fields }: ManagedEndpoint, inc: EndpointIncludes = {}): EndpointView {
  const view: EndpointView = {
    id: spec.id,
    name: spec.name,
    gpuTypeIds: fields.gpuTypeIds,
    gpuCount: fields.gpuCount,
    workersMin: spec.workersMin,
    workersMax: spec.workersMax,
    idleTimeout: spec.idleTimeout,
    executionTimeoutMs: spec.executionTimeoutMs ?? EXECUTION_TIMEOUT_DEFAULT_MS,
    scalerType: fields.scalerType,
    scalerValue: fields.scalerValue,
    dataCenterIds: fields.dataCenterIds,
    env: fields.env,
    computeType: fields.computeType,
    createdAt: iso(spec.createdAt),
    userId: EMULATOR_USER_ID,
    version: fields.version,
  };
  if (spec.type === "LOAD_BALANCER") view.type = spec.type;
  if (fields.templateId !== undefined) view.templateId = fields.templateId;
  if (fields.networkVolumeId !== undefined) view.networkVolumeId = fields.networkVolumeId;
  if (fields.networkVolumeIds !== undefined) view.networkVolumeIds = fields.networkVolumeIds;
  if (fields.allowedCudaVersions !== undefined) view.allowedCudaVersions = fields.allowedCudaVersions;
  if (fields.minCudaVersion !== undefined) view.minCudaVersion = fields.minCudaVersion;
  if (fields.flashboot !== undefined) view.flashboot = fields.flashboot !== "OFF";
  const template = fields.templateId !== undefined ? core.templates.find(fields.templateId) : undefined;
  if (inc.includeTemplate && template) view.template = toTemplateView(template);
  if (inc.includeWorkers) {
    view.workers = core.endpointManager.workers(spec.id).map((w) => toWorkerView(w, { spec, fields }, template?.imageName));
  }
  return view;
}

function toWorkerView(w: SimWorker, { spec, fields }: ManagedEndpoint, image: string | undefined): WorkerView {
  const state = w.state === "running" && w.jobId ? `running job ${w.jobId}` : w.state;
  const view: WorkerView = {
    id: w.id,
    name: `${spec.name} worker`,
    desiredStatus: "RUNNING",
    endpointId: spec.id,
    aiApiId: spec.id,
    gpuCount: fields.gpuCount,
    slsVersion: fields.version,
    lastStatusChange: `${state} since ${iso(w.since)}`,
  };
  if (fields.templateId !== undefined) view.templateId = fields.templateId;
  if (image !== undefined) view.image = image;
  const gpu = fields.gpuTypeIds[0];
  if (gpu !== undefined && fields.computeType === "GPU") view.gpu = { id: gpu, count: fields.gpuCount };
  return view;
}
