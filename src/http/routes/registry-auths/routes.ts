import { createRoute, z } from "@hono/zod-openapi";
import { MANAGEMENT_BODY_MAX_BYTES } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import { ERROR_RESPONSES, problem, json } from "../../schemas.js";

const TAG = "Container registry auths";

const errors = { ...ERROR_RESPONSES, 404: problem("No container registry auth with this id") };
const params = z.object({
  containerRegistryAuthId: z.string().min(1).openapi({ param: { name: "containerRegistryAuthId", in: "path" }, example: "clzdaifot0001l90809257ynb" }),
});

/** v1 ContainerRegistryAuth: the password (and username) are never shown. */
export const RegistryAuthSchema = z.object({ id: z.string(), name: z.string().openapi({ example: "my creds" }) }).openapi("ContainerRegistryAuth");

export const RegistryAuthCreateSchema = z
  .object({
    name: z.string().min(1).openapi({ description: "Unique among container registry auths", example: "my creds" }),
    username: z.string().min(1).openapi({ example: "my-username" }),
    password: z.string().min(1).openapi({ description: "Stored; never returned, logged or exported", example: "my-password" }),
  })
  .openapi("ContainerRegistryAuthCreateInput");

export const listRegistryAuths = createRoute({
  method: "get",
  path: "/v1/containerregistryauth",
  operationId: "ListContainerRegistryAuths",
  tags: [TAG],
  summary: "List container registry auths (v1: a bare array)",
  responses: { 200: json(z.array(RegistryAuthSchema), "Every auth, id and name only"), ...errors },
});

export const createRegistryAuth = createRoute({
  method: "post",
  path: "/v1/containerregistryauth",
  operationId: "CreateContainerRegistryAuth",
  tags: [TAG],
  summary: "Create a container registry auth",
  description: "Names are unique: a second auth with the same name is refused with 400.",
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
  request: { body: { required: true, content: { "application/json": { schema: RegistryAuthCreateSchema } } } },
  responses: { 200: json(RegistryAuthSchema, "Created"), ...errors },
});

export const getRegistryAuth = createRoute({
  method: "get",
  path: "/v1/containerregistryauth/{containerRegistryAuthId}",
  operationId: "GetContainerRegistryAuth",
  tags: [TAG],
  summary: "Get a container registry auth",
  request: { params },
  responses: { 200: json(RegistryAuthSchema, "The auth, id and name only"), ...errors },
});

export const deleteRegistryAuth = createRoute({
  method: "delete",
  path: "/v1/containerregistryauth/{containerRegistryAuthId}",
  operationId: "DeleteContainerRegistryAuth",
  tags: [TAG],
  summary: "Delete a container registry auth",
  description: "Refused with 400 while a pod or template uses it.",
  request: { params },
  responses: { 204: { description: "Deleted; no body" }, ...errors },
});
