import { createRoute, z } from "@hono/zod-openapi";
import { MANAGEMENT_BODY_MAX_BYTES } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import { ERROR_RESPONSES, problem, json } from "../../schemas.js";
import { PodCreateSchema, PodIncludeQuery, PodListQuery, PodSchema, PodUpdateSchema, TAG } from "./schemas.js";

const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const errors = { ...ERROR_RESPONSES, 404: problem("No pod with this id") };
const params = z.object({ podId: z.string().min(1).openapi({ param: { name: "podId", in: "path" }, example: "xedezhzb9la3ye" }) });

export const listPods = createRoute({
  method: "get",
  path: "/v1/pods",
  operationId: "ListPods",
  tags: [TAG],
  summary: "List pods (v1: a bare array)",
  description: "Filters combine; list filters take repeated or comma-separated values. Serverless workers are listed only with includeWorkers=true.",
  request: { query: PodListQuery },
  responses: { 200: json(z.array(PodSchema), "The pods"), ...errors },
});

export const createPod = createRoute({
  method: "post",
  path: "/v1/pods",
  operationId: "CreatePod",
  tags: [TAG],
  summary: "Create a pod (201)",
  description: "The pod is RUNNING at once and bills from now on. It gets the first of gpuTypeIds (or cpuFlavorIds), and the attached network volume's data center.",
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
  request: { body: body(PodCreateSchema) },
  responses: { 201: json(PodSchema, "Created and running"), ...errors },
});

export const getPod = createRoute({
  method: "get",
  path: "/v1/pods/{podId}",
  operationId: "GetPod",
  tags: [TAG],
  summary: "Get a pod",
  request: { params, query: PodIncludeQuery },
  responses: { 200: json(PodSchema, "The pod"), ...errors },
});

const update = (method: "patch" | "post", path: string, operationId: string) =>
  createRoute({
    method,
    path,
    operationId,
    tags: [TAG],
    summary: method === "patch" ? "Update a pod" : "Update a pod (synonym of PATCH)",
    description: "Changes beyond name and locked reset a running pod: lastStartedAt moves to now.",
    middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
    request: { params, body: body(PodUpdateSchema) },
    responses: { 200: json(PodSchema, "The updated pod"), ...errors },
  });

export const updatePod = update("patch", "/v1/pods/{podId}", "UpdatePod");
export const updatePodPost = update("post", "/v1/pods/{podId}/update", "UpdatePodPost");

export const deletePod = createRoute({
  method: "delete",
  path: "/v1/pods/{podId}",
  operationId: "DeletePod",
  tags: [TAG],
  summary: "Terminate a pod",
  description: "The pod is gone (404 afterwards); its billing history stays.",
  request: { params },
  responses: { 204: { description: "Deleted; no body" }, ...errors },
});

const action = (verb: "start" | "stop" | "reset" | "restart", operationId: string, summary: string, description: string) =>
  createRoute({
    method: "post",
    path: `/v1/pods/{podId}/${verb}`,
    operationId,
    tags: [TAG],
    summary,
    description,
    request: { params },
    responses: { 200: json(PodSchema, "The pod after the action"), ...errors },
  });

export const startPod = action("start", "StartPod", "Start or resume a pod", "EXITED → RUNNING (lastStartedAt moves to now, billing resumes); a running pod is answered as it is.");
export const stopPod = action("stop", "StopPod", "Stop a pod", "RUNNING → EXITED (billing stops); a stopped pod is answered as it is. Refused with 400 while the pod is locked.");
export const resetPod = action("reset", "ResetPod", "Reset a pod", "Starts the container again from a clean container disk: RUNNING, lastStartedAt moves to now. Refused with 400 while the pod is locked.");
export const restartPod = action("restart", "RestartPod", "Restart a pod", "Restarts a running pod's container: lastStartedAt moves to now. Refused with 400 on a stopped pod (start it) or a locked one.");
