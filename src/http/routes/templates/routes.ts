import { createRoute, z } from "@hono/zod-openapi";
import { MANAGEMENT_BODY_MAX_BYTES } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import { ERROR_RESPONSES, problem, json } from "../../schemas.js";
import { CreateTemplateSchema, TAG, TemplateSchema, UpdateTemplateSchema, flagQuery } from "./schemas.js";

const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const errors = { ...ERROR_RESPONSES, 404: problem("No template with this id") };
const params = z.object({ templateId: z.string().min(1).openapi({ param: { name: "templateId", in: "path" }, example: "30zmvf89kd" }) });
const listQuery = z.object({
  includeEndpointBoundTemplates: flagQuery("includeEndpointBoundTemplates", "Accepted; every template here is the user's own, so all are listed"),
  includePublicTemplates: flagQuery("includePublicTemplates", "Accepted; there are no public templates besides the user's"),
  includeRunpodTemplates: flagQuery("includeRunpodTemplates", "Accepted; there are no official templates in the emulator"),
});

export const listTemplates = createRoute({
  method: "get",
  path: "/v1/templates",
  operationId: "ListTemplates",
  tags: [TAG],
  summary: "List templates (a bare array)",
  request: { query: listQuery },
  responses: { 200: json(z.array(TemplateSchema), "Every template"), ...errors },
});

export const createTemplate = createRoute({
  method: "post",
  path: "/v1/templates",
  operationId: "CreateTemplate",
  tags: [TAG],
  summary: "Create a template",
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
  request: { body: body(CreateTemplateSchema) },
  responses: { 200: json(TemplateSchema, "Created"), ...errors },
});

export const getTemplate = createRoute({
  method: "get",
  path: "/v1/templates/{templateId}",
  operationId: "GetTemplate",
  tags: [TAG],
  summary: "Get a template",
  request: { params, query: listQuery },
  responses: { 200: json(TemplateSchema, "The template"), ...errors },
});

/** v1 offers the update under PATCH and as a POST to `/update`; one declaration serves both. */
const updateRoute = <M extends "patch" | "post", P extends string>(method: M, path: P, operationId: string, summary: string) =>
  createRoute({
    method,
    path,
    operationId,
    tags: [TAG],
    summary,
    description: "Only the fields given change. A change of what workers run (image, env, handler, ...) is a new release of the endpoints made from the template: their `version` goes up and they run the new handler.",
    middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
    request: { params, body: body(UpdateTemplateSchema) },
    responses: { 200: json(TemplateSchema, "The updated template"), ...errors },
  });

export const updateTemplate = updateRoute("patch", "/v1/templates/{templateId}", "UpdateTemplate", "Update a template");
export const updateTemplateByPost = updateRoute("post", "/v1/templates/{templateId}/update", "UpdateTemplateByPost", "Update a template (POST synonym of PATCH)");

export const deleteTemplate = createRoute({
  method: "delete",
  path: "/v1/templates/{templateId}",
  operationId: "DeleteTemplate",
  tags: [TAG],
  summary: "Delete a template",
  description: "Refused with 400 while an endpoint is made from the template.",
  request: { params },
  responses: { 204: { description: "Deleted; no body" }, ...errors },
});
