import { createRoute, z } from "@hono/zod-openapi";
import { MANAGEMENT_BODY_MAX_BYTES } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import { ERROR_RESPONSES, problem, json } from "../../schemas.js";
import {
  CreateNetworkVolumeSchema,
  CreateNetworkVolumeV1Schema,
  ListNetworkVolumesSchema,
  NetworkVolumeSchema,
  NetworkVolumeV1Schema,
  TAG,
  UpdateNetworkVolumeSchema,
  UpdateNetworkVolumeV1Schema,
} from "./schemas.js";

const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const errors = { ...ERROR_RESPONSES, 404: problem("No network volume with this id") };
const deleted = { 204: { description: "Deleted; no body" } };
const v2Params = z.object({ id: z.string().min(1).openapi({ param: { name: "id", in: "path" }, description: "Network volume id", example: "agv6w2qcg7" }) });
const v1Params = z.object({ networkVolumeId: z.string().min(1).openapi({ param: { name: "networkVolumeId", in: "path" }, example: "agv6w2qcg7" }) });

export const listV2 = createRoute({
  method: "get",
  path: "/v2/network-volumes",
  operationId: "listNetworkVolumes",
  tags: [TAG],
  summary: "List network volumes",
  responses: { 200: json(ListNetworkVolumesSchema, "Every network volume"), ...errors },
});

export const createV2 = createRoute({
  method: "post",
  path: "/v2/network-volumes",
  operationId: "createNetworkVolume",
  tags: [TAG],
  summary: "Create a network volume",
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
  request: { body: body(CreateNetworkVolumeSchema) },
  responses: { 201: json(NetworkVolumeSchema, "Created"), ...errors },
});

export const getV2 = createRoute({
  method: "get",
  path: "/v2/network-volumes/{id}",
  operationId: "getNetworkVolume",
  tags: [TAG],
  summary: "Get a network volume",
  request: { params: v2Params },
  responses: { 200: json(NetworkVolumeSchema, "The volume"), ...errors },
});

export const updateV2 = createRoute({
  method: "patch",
  path: "/v2/network-volumes/{id}",
  operationId: "updateNetworkVolume",
  tags: [TAG],
  summary: "Rename or grow a network volume",
  description: "Only `name` and `size` change (at least one). The size may only grow; `dataCenter` and `type` are immutable: an attempt is refused with 400.",
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
  request: { params: v2Params, body: body(UpdateNetworkVolumeSchema) },
  responses: { 200: json(NetworkVolumeSchema, "The updated volume"), ...errors },
});

export const deleteV2 = createRoute({
  method: "delete",
  path: "/v2/network-volumes/{id}",
  operationId: "deleteNetworkVolume",
  tags: [TAG],
  summary: "Delete a network volume",
  description: "Refused with 400 while an endpoint uses the volume.",
  request: { params: v2Params },
  responses: { ...deleted, ...errors },
});

export const listV1 = createRoute({
  method: "get",
  path: "/v1/networkvolumes",
  operationId: "ListNetworkVolumes",
  tags: [TAG],
  summary: "List network volumes (v1: a bare array)",
  responses: { 200: json(z.array(NetworkVolumeV1Schema), "Every network volume"), ...errors },
});

export const createV1 = createRoute({
  method: "post",
  path: "/v1/networkvolumes",
  operationId: "CreateNetworkVolume",
  tags: [TAG],
  summary: "Create a network volume (v1)",
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
  request: { body: body(CreateNetworkVolumeV1Schema) },
  responses: { 200: json(NetworkVolumeV1Schema, "Created"), ...errors },
});

export const getV1 = createRoute({
  method: "get",
  path: "/v1/networkvolumes/{networkVolumeId}",
  operationId: "GetNetworkVolume",
  tags: [TAG],
  summary: "Get a network volume (v1)",
  request: { params: v1Params },
  responses: { 200: json(NetworkVolumeV1Schema, "The volume"), ...errors },
});

/** v1 offers the update under PATCH and as a POST to `/update`; one declaration serves both. */
const updateV1Route = <M extends "patch" | "post", P extends string>(method: M, path: P, operationId: string, summary: string) =>
  createRoute({
    method,
    path,
    operationId,
    tags: [TAG],
    summary,
    description: "Only `name` and `size` change. The size may only grow; `dataCenterId` is immutable: an attempt is refused with 400.",
    middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
    request: { params: v1Params, body: body(UpdateNetworkVolumeV1Schema) },
    responses: { 200: json(NetworkVolumeV1Schema, "The updated volume"), ...errors },
  });

export const updateV1 = updateV1Route("patch", "/v1/networkvolumes/{networkVolumeId}", "UpdateNetworkVolume", "Rename or grow a network volume (v1)");
export const updateV1Post = updateV1Route(
  "post",
  "/v1/networkvolumes/{networkVolumeId}/update",
  "UpdateNetworkVolumeByPost",
  "Rename or grow a network volume (v1, POST synonym of PATCH)",
);

export const deleteV1 = createRoute({
  method: "delete",
  path: "/v1/networkvolumes/{networkVolumeId}",
  operationId: "DeleteNetworkVolume",
  tags: [TAG],
  summary: "Delete a network volume (v1)",
  description: "Refused with 400 while an endpoint uses the volume.",
  request: { params: v1Params },
  responses: { ...deleted, ...errors },
});
