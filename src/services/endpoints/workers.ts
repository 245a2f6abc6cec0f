import type { EndpointSpec } from "../../domain/endpoint.js";
import { EXTERNAL_HANDLER, type ExternalWorkerState } from "../../domain/external-workers.js";
import type { SimWorker } from "../../domain/simulated-workers.js";
import type { WorkerProtocol } from "../../domain/worker-protocol.js";
import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { EMULATOR_USER_ID } from "./record.js";
import { EmulatorError } from "../../domain/errors.js";
import { DEFAULT_DATA_CENTER_ID, DEFAULT_GPU_TYPE_ID } from "../shared/pricing.js";
import type { ViewContext } from "../shared/service.js";
import type { AppEnv } from "../../http/env.js";
import { idParams, routeHead } from "../shared/rest.js";
import { ERROR_RESPONSES, json, problem } from "../../http/schemas.js";
import { podLog, workerLog } from "../../domain/logbook.js";
import { LOG_STREAM_DESCRIPTION, LogQuery, logStream, logStreamResponse } from "../shared/log-stream.js";
import { iso } from "../shared/container-v2.js";

/** A worker's state as the v2 listing names it. */
export type WorkerStatus = "RUNNING" | "IDLE" | "INITIALIZING" | "THROTTLED" | "UNHEALTHY";

/** A worker of an endpoint: simulated, or a worker process fetching jobs over HTTP. */
export interface EndpointWorker {
  id: string;
  status: WorkerStatus;
  /** When it started (simulated workers: its creation, cold start included; worker processes: their first call). */
  startedAt: number | undefined;
  /** A worker process rather than a simulated worker. */
  external: boolean;
}

/**
 * What the listing reads of worker processes (endpoints whose handler is "external"): those that
 * are present now (not stopped, not lost), with their status. A small read interface, so how the
 * worker protocol tracks its workers (heartbeats, lost workers) can change behind it.
 */
export interface ExternalWorkerReader {
  active(endpointId: string): Array<{ id: string; status: WorkerStatus; startedAt: number }>;
  /** Whether a worker process of this id has called (of any endpoint). */
  known(workerId: string): boolean;
}

const STATUS: Record<SimWorker["state"], WorkerStatus> = { initializing: "INITIALIZING", idle: "IDLE", running: "RUNNING" };

/** The workers of an endpoint now: its simulated workers, or, when worker processes serve it, those. */
export function endpointWorkers(spec: EndpointSpec, simulated: readonly SimWorker[], reader: ExternalWorkerReader): EndpointWorker[] {
  const external = spec.handler === EXTERNAL_HANDLER ? reader.active(spec.id) : [];
  return [
    ...simulated.map((w) => ({ id: w.id, status: STATUS[w.state], startedAt: w.createdAt, external: false })),
    ...external.map((w) => ({ ...w, external: true })),
  ];
}

/** How the v2 listing names the states of a worker process that is present; stopped and lost ones have left. */
const PROCESS_STATUS: Partial<Record<ExternalWorkerState, WorkerStatus>> = { idle: "IDLE", running: "RUNNING", unhealthy: "UNHEALTHY" };

/** The worker processes the v2 workers listing shows, read from the worker protocol's registry. */
export function externalWorkerReader(protocol: WorkerProtocol): ExternalWorkerReader {
  return {
    active: (endpointId) =>
      protocol.workers.list(endpointId).flatMap((w) => {
        const status = PROCESS_STATUS[w.state];
        return status ? [{ id: w.id, status, startedAt: w.startedAt }] : [];
      }),
    known: (workerId) => protocol.workers.list().some((w) => w.id === workerId),
  };
}

const TAG = "Serverless";
const route = routeHead(TAG);
const errors = { ...ERROR_RESPONSES, 404: problem("No endpoint with this id") };
const params = idParams("id", "jpnw0v75y3qoql");

const WorkerSchema = z
  .object({
    id: z.string(),
    status: z.enum(["RUNNING", "IDLE", "INITIALIZING", "THROTTLED", "UNHEALTHY"]),
    isStale: z.boolean(),
    version: z.int().nullable(),
    gpuCount: z.int(),
    image: z.string().nullable(),
    uptimeSeconds: z.int().nullable(),
    gpuTypeId: z.string().nullable(),
    dataCenterId: z.string().nullable(),
    startedAt: z.string().nullable(),
  })
  .openapi("Worker");

const counts = { running: z.int(), idle: z.int(), initializing: z.int(), throttled: z.int(), unhealthy: z.int(), total: z.int() };
const WorkersResponse = z.object({ workers: z.array(WorkerSchema), summary: z.object(counts), endpointVersion: z.int().nullable() }).openapi("ListEndpointWorkersResponse");

const ReleasesResponse = z
  .object({
    endpointVersion: z.int().nullable(),
    rollout: z.object({ inProgress: z.boolean(), workersOnLatest: z.int(), workersTotal: z.int(), percentOnLatest: z.int() }),
    releases: z.array(
      z.object({
        id: z.string(),
        version: z.int().nullable(),
        source: z.enum(["GIT_BUILD", "MANUAL"]),
        buildId: z.string().nullable(),
        createdByUserId: z.string().nullable(),
        workerCount: z.int(),
        createdAt: z.string(),
        diff: z.array(z.object({ field: z.string(), old: z.unknown(), new: z.unknown() })),
      }),
    ),
  })
  .openapi("ListEndpointReleasesResponse");

export const listWorkersRoute = createRoute({
  ...route("get", "/v2/serverless/{id}/workers", "listEndpointWorkers", "List an endpoint's workers"),
  description:
    "Its simulated workers (INITIALIZING during the cold start, IDLE, RUNNING a job) and, for an endpoint served by worker processes, the processes seen in the last minute (RUNNING while they hold a job). Every worker runs the current version: a release reaches all workers at once.",
  request: { params },
  responses: { 200: json(WorkersResponse, "The workers and their counts by status"), ...errors },
});

export const listReleasesRoute = createRoute({
  ...route("get", "/v2/serverless/{id}/releases", "listEndpointReleases", "List an endpoint's releases"),
  description: "A release at creation and with every change of what the workers run (template, image, env, handler), newest first, each with the fields it changed.",
  request: { params },
  responses: { 200: json(ReleasesResponse, "The release history and the rollout"), ...errors },
});

const listBuildsRoute = createRoute({
  ...route("get", "/v2/serverless/{id}/builds", "listEndpointBuilds", "List an endpoint's GitHub builds (always none here)"),
  description: "Not in the service's published description, but its MCP server calls it. minipod builds no images, so the list is empty.",
  request: { params },
  responses: { 200: json(z.object({ builds: z.array(z.unknown()) }), "No builds"), ...errors },
});

const getBuildRoute = createRoute({
  ...route("get", "/v2/serverless/{id}/builds/{buildId}", "getEndpointBuild", "Get a GitHub build (there are none here)"),
  description: "Not in the service's published description, but its MCP server calls it. minipod builds no images: every build id answers 404.",
  request: { params: z.object({ id: params.shape.id, buildId: z.string().min(1).openapi({ param: { name: "buildId", in: "path" } }) }) },
  responses: { 200: json(z.object({}), "Never: there are no builds"), ...errors },
});

const workerLogsRoute = createRoute({
  ...route("get", "/v2/serverless/{id}/workers/{workerId}/logs", "getWorkerLogs", "Stream a worker's log"),
  description: `${LOG_STREAM_DESCRIPTION} A simulated worker's log is its lifecycle (system: created, ready, stopped, crashed) and its jobs (container: started, completed in N ms, failed, stopped) with every line its handler wrote with \`ctx.log\`. A worker process minipod started for the endpoint's image (the config's images) has what it wrote as its log; another's output stays with the process: its log here has no lines. A scaled-down worker's log stays readable for a while, and its stream ends at once.`,
  request: { params: z.object({ id: params.shape.id, workerId: z.string().min(1).openapi({ param: { name: "workerId", in: "path" } }) }), query: LogQuery },
  responses: { 200: logStreamResponse("The worker's log"), ...errors },
});

const podLogsRoute = createRoute({
  ...route("get", "/v1/pod/{podId}/logs", "getPodLogSnapshot", "A worker's (or pod's) log lines at once, as the SDKs read them from the log service"),
  description:
    "What runpod-flash and the SDK 2.x read of a worker at RUNPOD_HAPI_URL: `{container, system}`, each line led by its ISO 8601 time. The id is a job's `workerId` (or a pod's id); `type` picks one source. With `stream=true`, Server-Sent Events of `{source, line, ts}` instead: the lines since `since` (or the last `tail`), then each new one, until the client goes.",
  request: {
    params: z.object({ podId: z.string().min(1).openapi({ param: { name: "podId", in: "path" } }) }),
    query: z.object({ type: z.enum(["all", "container", "system"]).optional(), stream: z.string().optional(), tail: LogQuery.shape.tail, since: LogQuery.shape.since }),
  },
  responses: {
    200: {
      description: "The lines (JSON), or their stream (stream=true)",
      content: {
        "application/json": { schema: z.object({ container: z.array(z.string()), system: z.array(z.string()) }).openapi("PodLogSnapshot") },
        "text/event-stream": { schema: z.string() },
      },
    },
    ...errors,
  },
});

/** The serverless routes beyond the five of the resource: workers, their logs, releases, builds. */
export function serverlessV2Routes(core: Pick<ViewContext, "endpointManager" | "externalWorkers" | "notifier" | "clock" | "logs">, router: OpenAPIHono<AppEnv>): void {
  const { endpointManager, clock } = core;

  router.openapi(listWorkersRoute, (c) => {
    const e = endpointManager.get(c.req.valid("param").id);
    const now = clock.now();
    const image = endpointManager.template(e)?.imageName ?? null;
    const gpu = e.fields.computeType === "GPU";
    const workers = endpointWorkers(e.spec, endpointManager.workers(e.spec.id), core.externalWorkers).map((w) => ({
      id: w.id,
      status: w.status,
      isStale: false,
      version: e.fields.version,
      gpuCount: gpu ? e.fields.gpuCount : 0,
      image,
      uptimeSeconds: w.startedAt === undefined ? null : Math.floor((now - w.startedAt) / 1000),
      gpuTypeId: w.external || !gpu ? null : (e.fields.gpuTypeIds[0] ?? DEFAULT_GPU_TYPE_ID),
      dataCenterId: w.external ? null : (e.fields.dataCenterIds[0] ?? DEFAULT_DATA_CENTER_ID),
      startedAt: w.startedAt === undefined ? null : iso(w.startedAt),
    }));
    const summary = { running: 0, idle: 0, initializing: 0, throttled: 0, unhealthy: 0, total: workers.length };
    for (const w of workers) summary[w.status.toLowerCase() as "running"]++;
    return c.json({ workers, summary, endpointVersion: e.fields.version }, 200);
  });

  router.openapi(workerLogsRoute, (c) => {
    const { id, workerId } = c.req.valid("param");
    const e = endpointManager.get(id);
    const key = workerLog(workerId);
    const { logs } = core;
    const current = endpointWorkers(e.spec, endpointManager.workers(id), core.externalWorkers).some((w) => w.id === workerId);
    if (!current && logs.count(key) === 0) {
      throw new EmulatorError("NOT_FOUND", `worker "${workerId}" not found on endpoint "${id}"; GET /v2/serverless/${id}/workers lists its workers`);
    }
    return logStream(c, core.notifier, { lines: () => logs.lines(key), ended: !current && logs.hasEnded(key), subscribe: (fn) => logs.subscribe(key, fn) }, c.req.valid("query"));
  });

  router.openapi(podLogsRoute, (c) => {
    const { podId } = c.req.valid("param");
    const { type = "all", stream, tail, since } = c.req.valid("query");
    const { logs } = core;
    const lines = [...logs.lines(workerLog(podId)), ...logs.lines(podLog(podId))];
    if (lines.length === 0 && !core.externalWorkers.known(podId)) throw new EmulatorError("NOT_FOUND", `no worker or pod "${podId}" has a log`);
    if (stream === "true") {
      const key = logs.count(podLog(podId)) > 0 ? podLog(podId) : workerLog(podId);
      const query = { ...(type === "all" ? {} : { source: type }), tail, since };
      return logStream(c, core.notifier, { lines: () => logs.lines(key), ended: false, subscribe: (fn) => logs.subscribe(key, fn) }, query) as never;
    }
    const of = (source: "container" | "system") => (type === "all" || type === source ? lines.filter((l) => l.source === source).map((l) => `${iso(l.at)} ${l.line}`) : []);
    return c.json({ container: of("container"), system: of("system") }, 200);
  });

  router.openapi(listReleasesRoute, (c) => {
    const id = c.req.valid("param").id;
    const e = endpointManager.get(id);
    const total = endpointWorkers(e.spec, endpointManager.workers(id), core.externalWorkers).length;
    const releases = endpointManager.releases(id).map((r) => ({
      id: r.id,
      version: r.version,
      source: "MANUAL" as const,
      buildId: null,
      createdByUserId: EMULATOR_USER_ID,
      workerCount: r.version === e.fields.version ? total : 0,
      createdAt: iso(r.createdAt),
      diff: r.diff,
    }));
    const rollout = { inProgress: false, workersOnLatest: total, workersTotal: total, percentOnLatest: total > 0 ? 100 : 0 };
    return c.json({ endpointVersion: e.fields.version, rollout, releases }, 200);
  });

  router.openapi(listBuildsRoute, (c) => {
    endpointManager.get(c.req.valid("param").id);
    return c.json({ builds: [] }, 200);
  });

  router.openapi(getBuildRoute, (c) => {
    const { id, buildId } = c.req.valid("param");
    endpointManager.get(id);
    throw new EmulatorError("NOT_FOUND", `build "${buildId}" not found: minipod builds no images, so endpoints have no GitHub builds`);
  });
}
