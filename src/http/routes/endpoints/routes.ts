import { createRoute, z } from "@hono/zod-openapi";
import { MANAGEMENT_BODY_MAX_BYTES } from "../../../domain/limits.js";
import { jsonBody } from "../../body.js";
import { ERROR_RESPONSES, problem, json } from "../../schemas.js";
import { flagQuery } from "../templates/schemas.js";
import { CreateEndpointSchema, EndpointSchema, TAG, UpdateEndpointSchema } from "./schemas.js";

const body = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const errors = { ...ERROR_RESPONSES, 404: problem("No endpoint with this id") };
const params = z.object({ endpointId: z.string().min(1).openapi({ param: { name: "endpointId", in: "path" }, example: "jpnw0v75y3qoql" }) });
const includes = z.object({
  includeTemplate: flagQuery("includeTemplate", "Include the endpoint's template"),
  includeWorkers: flagQuery("includeWorkers", "Include the endpoint's simulated workers"),
});

export const listEndpoints = createRoute({
  method: "get",
  path: "/v1/endpoints",
  operationId: "ListEndpoints",
  tags: [TAG],
  summary: "List endpoints (a bare array)",
  request: { query: includes },
  responses: { 200: json(z.array(EndpointSchema), "Every endpoint, the configured ones too"), ...errors },
});

export const createEndpoint = createRoute({
  method: "post",
  path: "/v1/endpoints",
  operationId: "CreateEndpoint",
  tags: [TAG],
  summary: "Create an endpoint",
  description:
    "The endpoint serves the queue operations under /v2/{id} at once, running its template's handler (or the config's defaultHandler); its minimum workers start cold. The template must be a serverless one.",
  middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
  request: { body: body(CreateEndpointSchema) },
  responses: { 200: json(EndpointSchema, "Created"), ...errors },
});

export const getEndpoint = createRoute({
  method: "get",
  path: "/v1/endpoints/{endpointId}",
  operationId: "GetEndpoint",
  tags: [TAG],
  summary: "Get an endpoint",
  request: { params, query: includes },
  responses: { 200: json(EndpointSchema, "The endpoint"), ...errors },
});

/** v1 offers the update under PATCH and as a POST to `/update`; one declaration serves both. */
const updateRoute = <M extends "patch" | "post", P extends string>(method: M, path: P, operationId: string, summary: string) =>
  createRoute({
    method,
    path,
    operationId,
    tags: [TAG],
    summary,
    description:
      "Only the fields given change. workersMin, workersMax and idleTimeout take effect on the simulated workers at once (idle workers over a lower maximum stop; a higher minimum starts workers); a new templateId switches the handler.",
    middleware: [jsonBody(MANAGEMENT_BODY_MAX_BYTES)] as const,
    request: { params, body: body(UpdateEndpointSchema) },
    responses: { 200: json(EndpointSchema, "The updated endpoint"), ...errors },
  });

export const updateEndpoint = updateRoute("patch", "/v1/endpoints/{endpointId}", "UpdateEndpoint", "Update an endpoint");
export const updateEndpointByPost = updateRoute("post", "/v1/endpoints/{endpointId}/update", "UpdateEndpointByPost", "Update an endpoint (POST synonym of PATCH)");

export const deleteEndpoint = createRoute({
  method: "delete",
  path: "/v1/endpoints/{endpointId}",
  operationId: "DeleteEndpoint",
  tags: [TAG],
  summary: "Delete an endpoint",
  description: "Its running handlers are stopped and its jobs forgotten; its queue operations answer 404 from then on.",
  request: { params },
  responses: { 204: { description: "Deleted; no body" }, ...errors },
});
